#include "transport/grpc/status_mapping.h"

#include <chrono>

#include "core/error.h"

namespace voxserve::transport::grpc {

::grpc::StatusCode GrpcCodeFor(const absl::Status& status) {
  switch (core::DetailOf(status).reason) {
    case core::ErrorReason::kQueueFull:
    case core::ErrorReason::kInsufficientStorage:  // HTTP 507: the voice store is full
      return ::grpc::StatusCode::RESOURCE_EXHAUSTED;
    case core::ErrorReason::kDraining:
      return ::grpc::StatusCode::UNAVAILABLE;
    case core::ErrorReason::kMethodNotAllowed:
      return ::grpc::StatusCode::UNIMPLEMENTED;
    // Over-long input or a body that is not JSON: the client's mistake, not worth retrying.
    // Audio over its bound too: shorter text (or a faster speed) is the fix, not a retry.
    case core::ErrorReason::kPayloadTooLarge:
    case core::ErrorReason::kOutputTooLong:
    case core::ErrorReason::kUnsupportedMediaType:
      return ::grpc::StatusCode::INVALID_ARGUMENT;
    case core::ErrorReason::kUnspecified:
      break;
  }
  // absl's canonical codes are gRPC's, value for value.
  const int code = static_cast<int>(status.code());
  if (code < 0 || code > static_cast<int>(::grpc::StatusCode::UNAUTHENTICATED)) {
    return ::grpc::StatusCode::UNKNOWN;
  }
  return static_cast<::grpc::StatusCode>(code);
}

GrpcError ToGrpcError(const absl::Status& status) {
  GrpcError error;
  if (status.ok()) return error;
  error.status = ::grpc::Status(GrpcCodeFor(status), std::string(status.message()));
  core::ErrorDetail detail = core::DetailOf(status);
  if (detail.retry_after_seconds) {
    error.trailers.emplace_back("retry-after-ms",
                                std::to_string(int64_t{*detail.retry_after_seconds} * 1000));
  }
  if (!detail.code.empty()) error.trailers.emplace_back("voxserve-error-code", detail.code);
  if (!detail.param.empty()) error.trailers.emplace_back("voxserve-error-param", detail.param);
  return error;
}

::grpc::Status FinishStatus(::grpc::CallbackServerContext& context, const absl::Status& status) {
  // gRPC cancels a call whose deadline passes; its count says why, not just "cancelled".
  const bool deadline_passed = status.code() == absl::StatusCode::kCancelled &&
                               context.deadline() <= std::chrono::system_clock::now();
  GrpcError error = ToGrpcError(
      deadline_passed ? absl::DeadlineExceededError("the call's deadline passed") : status);
  for (const auto& [key, value] : error.trailers) context.AddTrailingMetadata(key, value);
  return error.status;
}

}  // namespace voxserve::transport::grpc
