// The HTTP front end: HTTP plugged into a TcpListener (transport/tcp/tcp_listener.h, N I/O
// threads), one HttpSession per connection (HTTPS when given a TLS context), http.max_connections
// counted with the WebSockets upgraded from it. I/O threads only parse, route and write; synthesis
// runs on scheduler workers.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "absl/status/statusor.h"
#include "transport/auth/authenticator.h"
#include "transport/http/http_config.h"
#include "transport/http/http_metrics.h"
#include "transport/http/http_session.h"
#include "transport/http/router.h"
#include "transport/tcp/connection_set.h"
#include "transport/tcp/tcp_listener.h"
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

  int port() const { return listener_->port(); }
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
  void OnAccepted(boost::asio::ip::tcp::socket socket);

  // Declared before the listener (and its io_context): refusals still queued when the
  // io_context is destroyed count themselves out of it.
  std::atomic<int> pending_refusals_{0};
  const tls::ServerTlsContext* tls_;
  std::shared_ptr<SessionShared> shared_;
  tcp::ConnectionSet<HttpSession> sessions_;
  std::atomic<bool> stopped_{false};
  std::unique_ptr<tcp::TcpListener> listener_;
};

}  // namespace voxserve::transport::http
