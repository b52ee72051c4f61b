#include "transport/websocket/websocket_config.h"

#include "core/error.h"

namespace voxserve::transport::websocket {

absl::Status WebSocketConfig::Validate() const {
  if (max_message_bytes < 1024 || max_message_bytes > (size_t{64} << 20)) {
    return core::InvalidArgument("websocket.max_message_bytes must be within 1024..67108864");
  }
  if (ping_interval_ms < 100 || ping_interval_ms > 3'600'000) {
    return core::InvalidArgument("websocket.ping_interval_ms must be within 100..3600000");
  }
  if (idle_timeout_ms < 1 || idle_timeout_ms > 86'400'000) {
    return core::InvalidArgument("websocket.idle_timeout_ms must be within 1..86400000");
  }
  return absl::OkStatus();
}

}  // namespace voxserve::transport::websocket
