#include "transport/websocket/websocket_endpoint.h"

#include "core/error.h"
#include "transport/websocket/speech_stream.h"
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
           [this] { connections_.Closed(); }} {
  AddProtocol({std::string(kSpeechStreamPath),
               [](std::string_view path) { return path == kSpeechStreamPath; },
               [](ProtocolEnv env) -> std::unique_ptr<StreamProtocol> {
                 return std::make_unique<SpeechStream>(env.service, env.metrics, env.output,
                                                       std::move(env.keep_alive),
                                                       std::move(env.caller));
               }});
}

void WebSocketEndpoint::AddProtocol(ProtocolRoute protocol) {
  protocols_.push_back(std::move(protocol));
}

const ProtocolRoute* WebSocketEndpoint::Find(std::string_view path) const {
  for (const ProtocolRoute& protocol : protocols_) {
    if (protocol.serves(path)) return &protocol;
  }
  return nullptr;
}

void WebSocketEndpoint::Upgrade(http::UpgradeRequest request) {
  const auto beast_target = request.message.target();
  std::string_view target(beast_target.data(), beast_target.size());
  const ProtocolRoute* protocol = Find(target.substr(0, target.find('?')));
  if (protocol == nullptr) protocol = &protocols_.front();  // Serves() said yes: not reached
  connections_.Add(
      [&] { return std::make_shared<WebSocketConnection>(std::move(request), env_, *protocol); });
}

size_t WebSocketEndpoint::open_connections() const { return connections_.open(); }

void WebSocketEndpoint::Drain() { connections_.Drain(); }

bool WebSocketEndpoint::WaitClosed(std::chrono::milliseconds timeout) {
  return connections_.WaitClosed(timeout);
}

void WebSocketEndpoint::CloseAll() {
  for (const auto& connection : connections_.Live()) connection->Shutdown();
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
