// The HTTP listener: an Asio io_context run by N I/O threads, one acceptor, one HttpSession per
// connection (HTTPS when given a TLS context). I/O threads only parse, route and write;
// synthesis runs on scheduler workers.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "transport/auth/authenticator.h"
#include "transport/http/http_config.h"
#include "transport/http/http_metrics.h"
#include "transport/http/http_session.h"
#include "transport/http/router.h"
#include "transport/tls/server_tls_context.h"

namespace voxserve::transport::http {

// Who may connect and call: both optional, both outlive the server.
struct HttpSecurity {
  const tls::ServerTlsContext* tls = nullptr;          // null: plain HTTP
  const auth::Authenticator* authenticator = nullptr;  // null: no API keys
};

// Start/StopAccepting/Stop are for the server's main thread; port() is safe cross thread.
class HttpServer {
 public:
  // Binds the listening socket (so the port is known, and a busy port fails here, not later).
  // The router and metrics must outlive the server.
  // `websocket` (optional) takes over upgrade requests on its paths; it must outlive the server.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Create(const HttpConfig& config,
                                                            const Router& router,
                                                            HttpMetrics& metrics,
                                                            HttpSecurity security = {},
                                                            WebSocketUpgrader* websocket = nullptr);
  ~HttpServer();

  int port() const { return port_; }
  void Start();
  // Closes the listener; open connections finish their exchanges with Connection: close, and
  // WebSockets finish the work they have started, then close with 1001 (going away).
  void StopAccepting();
  // After StopAccepting: waits up to `timeout` for the WebSockets to close; true when all have.
  bool WaitWebSocketsClosed(std::chrono::milliseconds timeout);
  // After StopAccepting: waits up to `timeout` until no HTTP response is still being written
  // (a finished request's last bytes may be queued on its connection); true when none is.
  bool WaitResponsesWritten(std::chrono::milliseconds timeout);
  // Closes every connection and joins the I/O threads.
  void Stop();

 private:
  HttpServer(const HttpConfig& config, const Router& router, HttpMetrics& metrics,
             HttpSecurity security, WebSocketUpgrader* websocket);
  void Accept();
  void OnAccepted(boost::asio::ip::tcp::socket socket);
  void Track(const std::shared_ptr<HttpSession>& session);

  // Declared before io_context_: refusals still queued when the io_context is destroyed count
  // themselves out of it.
  std::atomic<int> pending_refusals_{0};
  boost::asio::io_context io_context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;  // backs off after accept errors (out of fds)
  const tls::ServerTlsContext* tls_;
  std::shared_ptr<SessionShared> shared_;
  int port_ = 0;
  std::vector<std::thread> threads_;

  std::mutex sessions_mutex_;
  std::vector<std::weak_ptr<HttpSession>> sessions_;  // pruned as they expire; for Stop()
  bool stopped_ = false;
};

}  // namespace voxserve::transport::http
