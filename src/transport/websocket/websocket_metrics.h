// WebSocket-level metrics: open sockets, messages by direction and type, how sockets ended.
// Request-level figures (time to first audio, failures by code, ...) are the service's, per
// sentence, shared with HTTP and gRPC. Every label has a fixed set of values.
#pragma once

#include <string_view>

#include "core/metrics.h"

namespace voxserve::transport::websocket {

// References into the registry, which outlives the server. Safe cross thread.
struct WebSocketMetrics {
  explicit WebSocketMetrics(core::MetricsRegistry& registry);

  // direction "in": config, text, flush, close, invalid, binary; "out": ready, audio,
  // segment_done, done, error.
  void CountMessage(std::string_view direction, std::string_view type);
  // code: the close code the server sent ("1000", "1001", "1008", ...), "client" when the
  // client closed or went away first, "aborted" when the server cut a dead connection.
  void CountClosed(std::string_view code);

  core::Gauge& connections;
  core::Family<core::Counter>& messages;  // labels: direction, type
  core::Family<core::Counter>& closed;    // labels: code
};

}  // namespace voxserve::transport::websocket
