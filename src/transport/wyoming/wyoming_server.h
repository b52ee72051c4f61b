// The Wyoming listener (wyoming.*; docs/wyoming.md): voxserve as a Home Assistant TTS service.
// Wyoming plugged into a TcpListener of its own (transport/tcp/tcp_listener.h), one
// WyomingConnection per client, checked against wyoming.allow and wyoming.max_connections as it
// is accepted. I/O threads only parse and
// write; synthesis runs on the scheduler's workers.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/metrics.h"
#include "service/tts_service.h"
#include "transport/tcp/connection_set.h"
#include "transport/tcp/tcp_listener.h"
#include "transport/wyoming/client_allow_list.h"
#include "transport/wyoming/event_handler.h"
#include "transport/wyoming/wyoming_config.h"
#include "transport/wyoming/wyoming_connection.h"
#include "transport/wyoming/wyoming_metrics.h"

namespace voxserve::transport::wyoming {

struct WyomingServerOptions {
  std::string host;               // where to listen (wyoming.host, or http.host when that is empty)
  std::string version;            // voxserve's, listed in info
  int write_timeout_ms = 30'000;  // http.write_timeout_ms
};

// Start/StopAccepting/WaitClosed/Stop are for the server's main thread; the rest is safe cross
// thread. The service and the registry outlive it.
class WyomingServer {
 public:
  // Validates the config and binds the port (a busy port fails here, not later).
  static absl::StatusOr<std::unique_ptr<WyomingServer>> Create(const WyomingConfig& config,
                                                               WyomingServerOptions options,
                                                               service::TtsService& service,
                                                               core::MetricsRegistry& registry);
  ~WyomingServer();

  std::string address() const;  // "host:port", the port bound
  int port() const { return listener_->port(); }
  void Start();
  // Closes the listener; open connections finish what they are doing (a stream its running
  // sentence), then close.
  void StopAccepting();
  // After StopAccepting: waits up to `timeout` for every connection to close; true when all have.
  bool WaitClosed(std::chrono::milliseconds timeout);
  // Closes every connection (their work is cancelled) and joins the I/O threads.
  void Stop();

 private:
  WyomingServer(const WyomingConfig& config, WyomingServerOptions options,
                service::TtsService& service, core::MetricsRegistry& registry,
                ClientAllowList allow);
  void OnAccepted(boost::asio::ip::tcp::socket socket);

  // Declared before the listener (and its io_context): connections still held by its queued
  // handlers when it is destroyed reach these from their destructors.
  const WyomingConfig config_;
  const WyomingServerOptions options_;
  WyomingMetrics metrics_;
  HandlerEnv handler_env_;
  ConnectionEnv connection_env_;
  const ClientAllowList allow_;
  tcp::ConnectionSet<WyomingConnection> connections_;
  std::atomic<bool> stopped_{false};
  std::unique_ptr<tcp::TcpListener> listener_;
};

}  // namespace voxserve::transport::wyoming
