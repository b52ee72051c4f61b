#include "transport/http/http_config.h"

#include "core/error.h"

namespace voxserve::transport::http {

absl::Status HttpConfig::Validate() const {
  if (port < 0 || port > 65535) return core::InvalidArgument("http.port must be within 0..65535");
  if (io_threads < 0 || io_threads > 1024) {
    return core::InvalidArgument("http.io_threads must be within 0..1024");
  }
  if (max_body_bytes < 1024) return core::InvalidArgument("http.max_body_bytes must be >= 1024");
  if (max_header_bytes < 1024) {
    return core::InvalidArgument("http.max_header_bytes must be >= 1024");
  }
  for (auto [name, value] : {std::pair{"http.header_timeout_ms", header_timeout_ms},
                             {"http.body_timeout_ms", body_timeout_ms},
                             {"http.idle_timeout_ms", idle_timeout_ms},
                             {"http.write_timeout_ms", write_timeout_ms}}) {
    if (value < 1) return core::InvalidArgument(std::string(name) + " must be >= 1");
  }
  if (max_connections < 1) return core::InvalidArgument("http.max_connections must be >= 1");
  return cors.Validate();
}

}  // namespace voxserve::transport::http
