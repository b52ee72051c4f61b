#include "transport/grpc/grpc_config.h"

#include "core/error.h"

namespace voxserve::transport::grpc {

absl::Status GrpcConfig::Validate() const {
  if (port < 0 || port > 65535) return core::InvalidArgument("grpc.port must be within 0..65535");
  if (max_message_bytes < 1024 || max_message_bytes > (size_t{1} << 30)) {
    return core::InvalidArgument("grpc.max_message_bytes must be within 1024..1073741824");
  }
  return absl::OkStatus();
}

}  // namespace voxserve::transport::grpc
