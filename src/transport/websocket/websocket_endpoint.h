// The WebSocket endpoint: takes upgraded connections over from the HTTP server, gives each the
// protocol its path asks for (GET /v1/audio/speech/stream, voxserve's speech stream, always;
// others added with AddProtocol), tracks them for the drain and the stop, and answers a GET on the
// speech stream's path that does not ask to upgrade with 426.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string_view>

#include "core/metrics.h"
#include "service/tts_service.h"
#include "transport/http/http_config.h"
#include "transport/http/http_metrics.h"
#include "transport/http/router.h"
#include "transport/http/websocket_upgrade.h"
#include "transport/tcp/connection_set.h"
#include "transport/websocket/websocket_config.h"
#include "transport/websocket/websocket_connection.h"
#include "transport/websocket/websocket_metrics.h"

namespace voxserve::transport::websocket {

inline constexpr std::string_view kSpeechStreamPath = "/v1/audio/speech/stream";

// Safe cross thread. Everything referenced outlives the endpoint, and the endpoint outlives the
// HTTP server that hands it connections (whose destruction ends the last of them).
class WebSocketEndpoint final : public http::WebSocketUpgrader {
 public:
  WebSocketEndpoint(const WebSocketConfig& config, const http::HttpConfig& http_config,
                    service::TtsService& service, core::MetricsRegistry& registry,
                    http::HttpMetrics& http_metrics);

  // Before the HTTP server starts (the list is read cross thread without a lock afterwards).
  void AddProtocol(ProtocolRoute protocol);

  bool Serves(std::string_view path) const override { return Find(path) != nullptr; }
  bool AuthenticatesInStream(std::string_view path) const override {
    const ProtocolRoute* protocol = Find(path);
    return protocol != nullptr && protocol->authenticates_in_stream;
  }
  void Upgrade(http::UpgradeRequest request) override;
  size_t open_connections() const override;
  void Drain() override;
  bool WaitClosed(std::chrono::milliseconds timeout) override;
  void CloseAll() override;

 private:
  const ProtocolRoute* Find(std::string_view path) const;

  WebSocketMetrics metrics_;
  ConnectionEnv env_;
  std::deque<ProtocolRoute> protocols_;  // connections hold references: a deque keeps them valid
  tcp::ConnectionSet<WebSocketConnection> connections_;
};

// The route for the router (auth, 404/405 and metrics as any route): a GET without the upgrade
// headers gets 426 Upgrade Required.
void AddSpeechStreamRoute(http::Router& router);

}  // namespace voxserve::transport::websocket
