// The one place where a Status becomes a gRPC answer: the code, the message, and trailing
// metadata with the details a client can act on (docs/grpc.md, "Errors" lists them):
//   retry-after-ms       RESOURCE_EXHAUSTED (full queue, rate limit): when to try again, in ms
//   voxserve-error-code  machine-readable reason, e.g. "voice_not_found" (REST's error.code)
//   voxserve-error-param the request field at fault, e.g. "voice" (REST's error.param)
// Codes: INVALID_ARGUMENT (bad input, also over-long input), NOT_FOUND (model, voice),
// RESOURCE_EXHAUSTED (queue full), DEADLINE_EXCEEDED, UNAUTHENTICATED / PERMISSION_DENIED (auth),
// CANCELLED (the client went away), UNAVAILABLE (draining, model still loading), INTERNAL.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace voxserve::transport::grpc {

struct GrpcError {
  ::grpc::Status status;
  std::vector<std::pair<std::string, std::string>> trailers;  // (lowercase key, ASCII value)
};

::grpc::StatusCode GrpcCodeFor(const absl::Status& status);
GrpcError ToGrpcError(const absl::Status& status);

// Maps `status` and adds its trailers to `context`: call it once, right before Finish. A call
// cancelled by its own deadline counts as DEADLINE_EXCEEDED.
::grpc::Status FinishStatus(::grpc::CallbackServerContext& context, const absl::Status& status);

}  // namespace voxserve::transport::grpc
