#include "transport/grpc/grpc_metrics.h"

#include <string>

namespace voxserve::transport::grpc {

GrpcMetrics::GrpcMetrics(core::MetricsRegistry& registry)
    : requests(registry.AddCounter("voxserve_grpc_requests_total",
                                   "gRPC calls answered, by method and status code.",
                                   {"method", "code"})) {}

void GrpcMetrics::CountCall(std::string_view method, ::grpc::StatusCode code) {
  requests.WithLabels({std::string(method), std::string(StatusCodeLabel(code))}).Increment();
}

std::string_view StatusCodeLabel(::grpc::StatusCode code) {
  switch (code) {
    case ::grpc::StatusCode::OK:
      return "ok";
    case ::grpc::StatusCode::CANCELLED:
      return "cancelled";
    case ::grpc::StatusCode::UNKNOWN:
      return "unknown";
    case ::grpc::StatusCode::INVALID_ARGUMENT:
      return "invalid_argument";
    case ::grpc::StatusCode::DEADLINE_EXCEEDED:
      return "deadline_exceeded";
    case ::grpc::StatusCode::NOT_FOUND:
      return "not_found";
    case ::grpc::StatusCode::ALREADY_EXISTS:
      return "already_exists";
    case ::grpc::StatusCode::PERMISSION_DENIED:
      return "permission_denied";
    case ::grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "resource_exhausted";
    case ::grpc::StatusCode::FAILED_PRECONDITION:
      return "failed_precondition";
    case ::grpc::StatusCode::ABORTED:
      return "aborted";
    case ::grpc::StatusCode::OUT_OF_RANGE:
      return "out_of_range";
    case ::grpc::StatusCode::UNIMPLEMENTED:
      return "unimplemented";
    case ::grpc::StatusCode::INTERNAL:
      return "internal";
    case ::grpc::StatusCode::UNAVAILABLE:
      return "unavailable";
    case ::grpc::StatusCode::DATA_LOSS:
      return "data_loss";
    case ::grpc::StatusCode::UNAUTHENTICATED:
      return "unauthenticated";
    default:
      return "unknown";
  }
}

}  // namespace voxserve::transport::grpc
