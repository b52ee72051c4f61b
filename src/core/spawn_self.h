// Starts this program again (/proc/self/exe) as a helper process: the scheduler's worker
// processes and espeak-ng's template process. One place for what every such child needs: one
// inherited descriptor, the signals the server blocks for sigwait unblocked and at their default,
// and a process group of its own (a terminal's Ctrl-C is for the server, which drains).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace voxserve::core {

// Spawns /proc/self/exe with `args` (argv[0] first) and `env` ("NAME=value"); `fd` becomes the
// child's `child_fd` (every other descriptor of ours is close-on-exec). 0 and the child's pid in
// `*pid`, or posix_spawn's error number.
int SpawnSelf(std::vector<std::string> args, std::vector<std::string> env, int fd, int child_fd,
              pid_t* pid);

}  // namespace voxserve::core
