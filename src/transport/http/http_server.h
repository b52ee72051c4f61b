// The HTTP listener: an Asio io_context run by N I/O threads, one acceptor, one HttpSession per
// connection. I/O threads only parse, route and write; synthesis runs on scheduler workers.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "absl/status/statusor.h"
#include "transport/http/http_config.h"
#include "transport/http/http_metrics.h"
#include "transport/http/http_session.h"
#include "transport/http/router.h"

namespace voxserve::transport::http {

// Start/StopAccepting/Stop are for the server's main thread; port() is safe cross thread.
class HttpServer {
 public:
  // Binds the listening socket (so the port is known, and a busy port fails here, not later).
  // The router and metrics must outlive the server.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Create(const HttpConfig& config,
                                                            const Router& router,
                                                            HttpMetrics& metrics);
  ~HttpServer();

  int port() const { return port_; }
  void Start();
  // Closes the listener; open connections finish their exchanges with Connection: close.
  void StopAccepting();
  // Closes every connection and joins the I/O threads.
  void Stop();

 private:
  HttpServer(const HttpConfig& config, const Router& router, HttpMetrics& metrics);
  void Accept();
  void Track(const std::shared_ptr<HttpSession>& session);

  boost::asio::io_context io_context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<SessionShared> shared_;
  int port_ = 0;
  std::vector<std::thread> threads_;
  std::atomic<size_t> open_connections_{0};

  std::mutex sessions_mutex_;
  std::vector<std::weak_ptr<HttpSession>> sessions_;  // pruned as they expire; for Stop()
  bool stopped_ = false;
};

}  // namespace voxserve::transport::http
