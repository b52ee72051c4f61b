#include "server/open_file_limit.h"

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/error.h"

namespace voxserve::server {
namespace {

// setrlimit refuses RLIM_INFINITY for RLIMIT_NOFILE; the real ceiling is fs.nr_open.
uint64_t KernelFileCeiling() {
  std::ifstream nr_open("/proc/sys/fs/nr_open");
  uint64_t value = 0;
  if (nr_open >> value && value > 0) return value;
  return 1 << 20;  // Linux's default nr_open
}

}  // namespace

absl::StatusOr<OpenFileLimit> RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return core::Internal(std::string("cannot read RLIMIT_NOFILE: ") + std::strerror(errno));
  }
  OpenFileLimit out;
  out.soft_before = limit.rlim_cur;
  out.hard = limit.rlim_max == RLIM_INFINITY ? KernelFileCeiling() : limit.rlim_max;
  out.soft = limit.rlim_cur;
  if (limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= out.hard) {
    out.soft = std::min<uint64_t>(limit.rlim_cur, out.hard);
    return out;
  }
  rlimit raised = limit;
  raised.rlim_cur = out.hard;
  if (setrlimit(RLIMIT_NOFILE, &raised) == 0) out.soft = out.hard;
  return out;
}

absl::StatusOr<ConnectionBudget> FitConnectionsToFileLimit(size_t configured, uint64_t nofile,
                                                           size_t reserve) {
  ConnectionBudget budget;
  const uint64_t room = nofile > reserve ? nofile - reserve : 0;
  if (room < kMinimumConnections) {
    return core::InvalidArgument(
        "the open-file limit (RLIMIT_NOFILE " + std::to_string(nofile) + ") leaves room for " +
        std::to_string(room) + " connections after the " + std::to_string(reserve) +
        " descriptors voxserve keeps for itself; at least " + std::to_string(kMinimumConnections) +
        " are needed: raise it (ulimit -n, systemd " + "LimitNOFILE=, docker --ulimit nofile=)");
  }
  if (configured <= room) {
    budget.max_connections = configured;
    return budget;
  }
  budget.max_connections = static_cast<size_t>(room);
  budget.warning = "http.max_connections " + std::to_string(configured) +
                   " does not fit the open-file limit (RLIMIT_NOFILE " + std::to_string(nofile) +
                   ", of which " + std::to_string(reserve) +
                   " are kept for refusals, listeners, gRPC, models and logs): serving at most " +
                   std::to_string(room) +
                   " connections; raise the hard limit (ulimit -Hn, systemd LimitNOFILE=, "
                   "docker --ulimit nofile=) or lower http.max_connections";
  return budget;
}

}  // namespace voxserve::server
