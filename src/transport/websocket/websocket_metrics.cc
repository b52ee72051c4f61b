#include "transport/websocket/websocket_metrics.h"

#include <string>

namespace voxserve::transport::websocket {

WebSocketMetrics::WebSocketMetrics(core::MetricsRegistry& registry)
    : connections(registry.AddGauge("voxserve_websocket_connections", "Open WebSocket connections.")
                      .WithLabels({})),
      messages(registry.AddCounter(
          "voxserve_websocket_messages_total",
          "WebSocket messages by direction (in, out) and type (config, text, flush, close, "
          "invalid, binary; ready, audio, segment_done, done, error).",
          {"direction", "type"})),
      closed(registry.AddCounter(
          "voxserve_websocket_closed_total",
          "WebSocket connections ended, by the close code the server sent; client: the client "
          "closed or went away first; aborted: cut off (dead peer, failed handshake).",
          {"code"})) {}

void WebSocketMetrics::CountMessage(std::string_view direction, std::string_view type) {
  messages.WithLabels({std::string(direction), std::string(type)}).Increment();
}

void WebSocketMetrics::CountClosed(std::string_view code) {
  closed.WithLabels({std::string(code)}).Increment();
}

}  // namespace voxserve::transport::websocket
