#include "transport/http/http_server.h"

#include <algorithm>
#include <thread>

#include "transport/http/connection_refusal.h"

namespace voxserve::transport::http {
namespace net = boost::asio;

HttpServer::HttpServer(const HttpConfig& config, const Router& router, HttpMetrics& metrics,
                       HttpSecurity security, WebSocketUpgrader* websocket)
    : tls_(security.tls),
      shared_(std::make_shared<SessionShared>()) {
  shared_->config = config;
  shared_->router = &router;
  shared_->metrics = &metrics;
  shared_->authenticator = security.authenticator;
  shared_->websocket = websocket;
  shared_->cors = std::make_unique<const Cors>(config.cors);
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const HttpConfig& config,
                                                               const Router& router,
                                                               HttpMetrics& metrics,
                                                               HttpSecurity security,
                                                               WebSocketUpgrader* websocket) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  auto listener = tcp::TcpListener::Create(config.host, config.port, "http.host", "HTTP");
  if (!listener.ok()) return listener.status();
  std::unique_ptr<HttpServer> server(new HttpServer(config, router, metrics, security, websocket));
  server->listener_ = *std::move(listener);
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Start() {
  int threads = shared_->config.io_threads > 0
                    ? shared_->config.io_threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  listener_->Start(threads, [this](net::ip::tcp::socket socket) { OnAccepted(std::move(socket)); });
}

void HttpServer::OnAccepted(net::ip::tcp::socket socket) {
  boost::system::error_code ec;
  net::ip::tcp::no_delay no_delay(true);  // small chunks of streamed audio should leave at once
  socket.set_option(no_delay, ec);
  // An upgraded connection has left its HttpSession behind but is still open.
  const size_t upgraded =
      shared_->websocket != nullptr ? shared_->websocket->open_connections() : 0;
  const size_t limit = shared_->config.max_connections;
  auto session = sessions_.Add(
      [&] {
        return std::make_shared<HttpSession>(
            std::move(socket), tls_ != nullptr ? tls_->Current() : nullptr, shared_);
      },
      limit > upgraded ? limit - upgraded : 0);
  if (session != nullptr) return;
  shared_->metrics->connections_refused.Increment();
  if (tls_ == nullptr) return RefuseConnection(std::move(socket), pending_refusals_);
  // A TLS port cannot answer before a handshake, and the cap exists to spare that work.
  socket.close(ec);
}

void HttpServer::StopAccepting() {
  // Idempotent: the first call drains the WebSockets (Stop calls it again).
  if (!shared_->draining.exchange(true) && shared_->websocket != nullptr) {
    shared_->websocket->Drain();
  }
  listener_->StopAccepting();
}

bool HttpServer::WaitWebSocketsClosed(std::chrono::milliseconds timeout) {
  return shared_->websocket == nullptr || shared_->websocket->WaitClosed(timeout);
}

bool HttpServer::WaitResponsesWritten(std::chrono::milliseconds timeout) {
  return shared_->open_exchanges.WaitNone(timeout);
}

void HttpServer::Stop() {
  if (stopped_.exchange(true)) return;
  for (const auto& session : sessions_.Live()) session->Close();
  if (shared_->websocket != nullptr) shared_->websocket->CloseAll();
  StopAccepting();
  listener_->Stop();
}

}  // namespace voxserve::transport::http
