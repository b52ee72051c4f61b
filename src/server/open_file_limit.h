// The process's open-file limit (RLIMIT_NOFILE) and the number of connections it leaves room
// for. Every HTTP or WebSocket connection holds one descriptor, so http.max_connections is only
// a promise the kernel keeps when the limit is above it plus what the rest of the server needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "transport/http/connection_refusal.h"

namespace voxserve::server {

// Descriptors kept for everything but HTTP/WebSocket connections: the refusals still answering
// a 503 above the cap (connection_refusal.h), and 256 for listeners, epoll and eventfds of the
// I/O loops, gRPC's own connections and wakeup fds, espeak-ng data, model files while they load
// and logs (an idle server uses about 15; gRPC connections are not counted in max_connections).
inline constexpr size_t kReservedDescriptors = 256 + transport::http::kMaxPendingRefusals;
// Below this many connections a server is not worth starting.
inline constexpr size_t kMinimumConnections = 16;

struct OpenFileLimit {
  uint64_t soft_before = 0;  // as inherited (Linux's default is 1024)
  uint64_t soft = 0;         // in force now
  uint64_t hard = 0;
};

// Raises the soft limit to the hard one: the soft default (1024) is far below what thousands of
// idle connections need, and raising it is exactly what the hard limit allows without privilege.
// An infinite hard limit becomes the kernel's nr_open. Fails only when the limit cannot be read;
// a refused raise leaves the soft limit as it was (`soft` says so).
absl::StatusOr<OpenFileLimit> RaiseOpenFileLimit();

struct ConnectionBudget {
  size_t max_connections = 0;  // what the server will use
  std::string warning;         // set when the configured value had to be lowered
};

// The configured max_connections when `nofile` descriptors hold it plus `reserve`, else the
// largest value that fits, with a warning saying why and how to raise the limit (clamping keeps
// the default of 10,000 usable on hosts with a smaller limit). An error when not even
// kMinimumConnections fit.
absl::StatusOr<ConnectionBudget> FitConnectionsToFileLimit(size_t configured, uint64_t nofile,
                                                           size_t reserve = kReservedDescriptors);

}  // namespace voxserve::server
