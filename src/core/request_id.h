// Request ids, shared by every transport: each request's log line, response header (HTTP) or
// metadata (gRPC) carries one.
#pragma once

#include <string>
#include <string_view>

namespace voxserve::core {

// 16 random hex digits.
std::string NewRequestId();

// The id a client sent (X-Request-Id) when it is 1–128 printable ASCII characters, since it ends
// up in logs and in gRPC metadata; otherwise (also when absent) a new one.
std::string RequestIdOrNew(std::string_view given);

}  // namespace voxserve::core
