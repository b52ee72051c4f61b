// gRPC-level metrics: calls answered by method and status code. Request-level figures (time to
// first audio, failures by code, ...) are the service's, shared with HTTP.
#pragma once

#include <grpcpp/support/status.h>

#include <string_view>

#include "core/metrics.h"

namespace voxserve::transport::grpc {

// References into the registry, which outlives the server. Safe cross thread.
struct GrpcMetrics {
  explicit GrpcMetrics(core::MetricsRegistry& registry);

  // voxserve_grpc_requests_total{method="Synthesize", code="resource_exhausted"}: the code in
  // lower case, as voxserve_requests_failed_total writes it. grpc.health.v1 and reflection
  // calls are answered by gRPC itself and not counted.
  void CountCall(std::string_view method, ::grpc::StatusCode code);

  core::Family<core::Counter>& requests;  // labels: method, code
};

// "ok", "invalid_argument", "resource_exhausted", ...
std::string_view StatusCodeLabel(::grpc::StatusCode code);

}  // namespace voxserve::transport::grpc
