#include "transport/websocket/websocket_endpoint.h"

#include "core/error.h"
#include "transport/http/error_response.h"

namespace voxserve::transport::websocket {

WebSocketEndpoint::WebSocketEndpoint(const WebSocketConfig& config,
                                     const http::HttpConfig& http_config,
                                     service::TtsService& service,
                                     core::MetricsRegistry& registry,
                                     http::HttpMetrics& http_metrics)
    : metrics_(registry),
      env_{service,
           metrics_,
           http_metrics,
           config,
           http_config.header_timeout_ms,
           http_config.write_timeout_ms,
           [this] { OnConnectionDestroyed(); }} {}

void WebSocketEndpoint::Upgrade(http::UpgradeRequest request) {
  auto connection = std::make_shared<WebSocketConnection>(std::move(request), env_);
  bool drain = false;
  {
    std::lock_guard lock(mutex_);
    std::erase_if(connections_, [](const auto& weak) { return weak.expired(); });
    connections_.push_back(connection);
    ++open_;
    drain = draining_;
  }
  connection->Start();
  if (drain) connection->Drain();
}

size_t WebSocketEndpoint::open_connections() const {
  std::lock_guard lock(mutex_);
  return open_;
}

void WebSocketEndpoint::OnConnectionDestroyed() {
  std::lock_guard lock(mutex_);
  if (--open_ == 0) all_closed_.notify_all();
}

std::vector<std::shared_ptr<WebSocketConnection>> WebSocketEndpoint::Live() {
  std::vector<std::shared_ptr<WebSocketConnection>> live;
  for (const auto& weak : connections_) {
    if (auto connection = weak.lock()) live.push_back(std::move(connection));
  }
  return live;
}

void WebSocketEndpoint::Drain() {
  std::vector<std::shared_ptr<WebSocketConnection>> live;
  {
    std::lock_guard lock(mutex_);
    draining_ = true;
    live = Live();
  }
  for (const auto& connection : live) connection->Drain();
}

bool WebSocketEndpoint::WaitClosed(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return all_closed_.wait_for(lock, timeout, [this] { return open_ == 0; });
}

void WebSocketEndpoint::CloseAll() {
  std::vector<std::shared_ptr<WebSocketConnection>> live;
  {
    std::lock_guard lock(mutex_);
    live = Live();
  }
  for (const auto& connection : live) connection->Shutdown();
}

void AddSpeechStreamRoute(http::Router& router) {
  router.Add("GET", std::string(kSpeechStreamPath), [](std::shared_ptr<http::HttpExchange> exchange) {
    http::HttpResponse response = http::ErrorResponse(core::InvalidArgument(
        "this route speaks WebSocket: send a GET with Upgrade: websocket", {},
        "websocket_required"));
    response.status = 426;  // RFC 9110 §15.5.22: the Upgrade header names the protocol
    response.SetHeader("Upgrade", "websocket");
    exchange->Respond(std::move(response));
  });
}

}  // namespace voxserve::transport::websocket
