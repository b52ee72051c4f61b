// Settings of the WebSocket speech stream (YAML: websocket.*), each with the reason for its
// default. The connection itself (timeouts for the upgrade request, max_connections) is http.*.
#pragma once

#include <cstddef>

#include "absl/status/status.h"

namespace voxserve::transport::websocket {

struct WebSocketConfig {
  // Largest message a client may send (close code 1009 above). 4096 characters of CJK text,
  // JSON-escaped as \uXXXX, are 24 KiB; an LLM's pieces are far smaller.
  size_t max_message_bytes = 64 << 10;
  // A ping goes out after this long without a frame from the client; a client silent for twice
  // as long (no pong either) is cut off. Under the usual 60 s idle cut-off of proxies.
  int ping_interval_ms = 15'000;
  // A connection with nothing to say (no message from the client, nothing being synthesized)
  // for this long is closed with 1008. Voice agents wait for their users: minutes, not seconds.
  int idle_timeout_ms = 300'000;

  absl::Status Validate() const;
};

}  // namespace voxserve::transport::websocket
