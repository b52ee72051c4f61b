// Settings of the gRPC listener (YAML: grpc.*), each with the reason for its default.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace voxserve::transport::grpc {

struct GrpcConfig {
  bool enabled = true;
  std::string host;  // empty = the HTTP listener's host (http.host)
  int port = 50051;  // gRPC's customary port; 0 = pick a free port (tests)
  // Largest request message accepted (RESOURCE_EXHAUSTED above). gRPC's own default: a text of
  // limits.max_input_chars fits many times over. Responses are not limited.
  size_t max_message_bytes = 4 << 20;
  bool reflection = true;  // grpc.reflection.v1alpha, for grpcurl and friends

  absl::Status Validate() const;
};

}  // namespace voxserve::transport::grpc
