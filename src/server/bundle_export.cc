#include "server/bundle_export.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#if VOXSERVE_ONNX
#include "engine/cosyvoice/bundle_check.h"
#endif

extern char** environ;

namespace voxserve::server {
namespace {

namespace fs = std::filesystem;

// Runs `args` (args[0] looked up on PATH) with its output on this process's stderr (stdout
// carries only the command's result, the bundle's path); its exit code, or -1 with errno when it
// could not start.
int Run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  std::fflush(stdout);
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    errno = error;
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

absl::Status ExportBundle(const BundleExport& request) {
  std::error_code error;
  const fs::path mount = fs::absolute(request.mount, error);
  const fs::path checkpoint = fs::absolute(request.checkpoint, error);
  const fs::path bundle = fs::absolute(request.bundle, error).lexically_normal();
  const fs::path inside = checkpoint.lexically_relative(mount);
  if (error || inside.empty() || inside.native().starts_with("..")) {
    return absl::InvalidArgumentError("the checkpoint " + checkpoint.string() + " is not inside " +
                                      mount.string());
  }
  fs::create_directories(bundle.parent_path(), error);
  if (error) {
    return absl::InvalidArgumentError("cannot create " + bundle.parent_path().string() + ": " +
                                      error.message());
  }
  const std::string user = std::to_string(getuid()) + ":" + std::to_string(getgid());
  std::vector<std::string> args = {"docker",
                                   "run",
                                   "--rm",
                                   "--pull",
                                   "never",
                                   "--user",
                                   user,
                                   "--read-only",
                                   "--tmpfs",
                                   "/tmp",
                                   "-v",
                                   mount.string() + ":/checkpoint:ro",
                                   "-v",
                                   bundle.parent_path().string() + ":/out",
                                   request.image,
                                   "--model-dir",
                                   (fs::path("/checkpoint") / inside).string(),
                                   "--out",
                                   (fs::path("/out") / bundle.filename()).string(),
                                   "--skip-if-current"};
  std::fprintf(stderr, "exporting %s into %s with %s\n", checkpoint.c_str(), bundle.c_str(),
               request.image.c_str());
  const int code = Run(args);
  if (code < 0) {
    return absl::FailedPreconditionError(
        std::string("--export runs the export image with docker, which could not start (") +
        std::strerror(errno) +
        "): install docker, or run the export yourself (docs/models.md, \"Fetching models\")");
  }
  if (code != 0) {
    return absl::InternalError("the export image " + request.image + " failed (exit " +
                               std::to_string(code) +
                               "; its output is above). Built it? "
                               "deploy/docker/build-export-image.sh");
  }
#if VOXSERVE_ONNX
  engine::cosyvoice::BundleReport report = engine::cosyvoice::CheckBundle(bundle.string());
  if (!report.ok()) {
    return absl::DataLossError("the exported bundle does not check out:\n" + report.Summary());
  }
#endif
  return absl::OkStatus();
}

}  // namespace voxserve::server
