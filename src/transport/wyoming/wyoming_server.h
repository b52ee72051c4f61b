// The Wyoming listener (wyoming.*; docs/wyoming.md): voxserve as a Home Assistant TTS service.
// Its own io_context and I/O threads, one acceptor, one WyomingConnection per client, checked
// against wyoming.allow and wyoming.max_connections as it is accepted. I/O threads only parse and
// write; synthesis runs on the scheduler's workers.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "core/metrics.h"
#include "service/tts_service.h"
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
  int port() const { return port_; }
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
  void Accept();
  void OnAccepted(boost::asio::ip::tcp::socket socket);
  void OnConnectionDestroyed();

  // Declared before the io_context: connections still held by its queued handlers when it is
  // destroyed reach these from their destructors.
  const WyomingConfig config_;
  const WyomingServerOptions options_;
  WyomingMetrics metrics_;
  HandlerEnv handler_env_;
  ConnectionEnv connection_env_;
  const ClientAllowList allow_;
  mutable std::mutex mutex_;
  std::condition_variable all_closed_;
  size_t open_ = 0;        // connections not yet destroyed
  bool draining_ = false;  // a connection accepted after StopAccepting is drained at once
  bool stopped_ = false;
  std::vector<std::weak_ptr<WyomingConnection>> connections_;  // pruned as they expire

  boost::asio::io_context io_context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;  // backs off after accept errors (out of fds)
  int port_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace voxserve::transport::wyoming
