#include "transport/http/http_server.h"

#include <boost/asio/strand.hpp>

#include "core/error.h"
#include "spdlog/spdlog.h"
#include "transport/http/connection_refusal.h"

namespace voxserve::transport::http {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// After a failed accept (EMFILE, ENFILE, ENOBUFS: out of descriptors or memory) the pending
// connection stays queued; retrying at once would spin a core. A short pause lets sessions close.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);

}  // namespace

HttpServer::HttpServer(const HttpConfig& config, const Router& router, HttpMetrics& metrics,
                       HttpSecurity security, WebSocketUpgrader* websocket)
    // The acceptor and its retry timer share a strand: accept handlers and StopAccepting's close
    // never run at once.
    : acceptor_(net::make_strand(io_context_)),
      accept_retry_(acceptor_.get_executor()),
      tls_(security.tls),
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
  std::unique_ptr<HttpServer> server(new HttpServer(config, router, metrics, security, websocket));
  boost::system::error_code ec;
  net::ip::address address = net::ip::make_address(config.host, ec);
  if (ec) return core::InvalidArgument("http.host '" + config.host + "' is not an IP address");
  tcp::endpoint endpoint(address, static_cast<unsigned short>(config.port));
  tcp::acceptor& acceptor = server->acceptor_;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError("cannot listen on " + config.host + ":" +
                                  std::to_string(config.port) + ": " + ec.message());
  }
  server->port_ = acceptor.local_endpoint().port();
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Start() {
  Accept();
  int threads = shared_->config.io_threads > 0
                    ? shared_->config.io_threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { io_context_.run(); });
}

void HttpServer::Accept() {
  acceptor_.async_accept(net::make_strand(io_context_), [this](boost::system::error_code ec,
                                                               tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      spdlog::warn("accept failed: {}; retrying in {} ms", ec.message(), kAcceptRetryDelay.count());
      accept_retry_.expires_after(kAcceptRetryDelay);
      accept_retry_.async_wait([this](boost::system::error_code wait_ec) {
        if (!wait_ec) Accept();
      });
      return;
    }
    OnAccepted(std::move(socket));
    Accept();
  });
}

void HttpServer::OnAccepted(tcp::socket socket) {
  boost::system::error_code ec;
  tcp::no_delay no_delay(true);  // small chunks of streamed audio should leave at once
  socket.set_option(no_delay, ec);
  size_t open = 0;
  {
    std::lock_guard lock(sessions_mutex_);
    std::erase_if(sessions_, [](const auto& weak) { return weak.expired(); });
    open = sessions_.size();
  }
  // An upgraded connection has left its HttpSession behind but is still open.
  if (shared_->websocket != nullptr) open += shared_->websocket->open_connections();
  if (open >= shared_->config.max_connections) {
    shared_->metrics->connections_refused.Increment();
    if (tls_ == nullptr) return RefuseConnection(std::move(socket), pending_refusals_);
    // A TLS port cannot answer before a handshake, and the cap exists to spare that work.
    socket.close(ec);
    return;
  }
  auto session = std::make_shared<HttpSession>(
      std::move(socket), tls_ != nullptr ? tls_->Current() : nullptr, shared_);
  Track(session);
  session->Start();
}

void HttpServer::Track(const std::shared_ptr<HttpSession>& session) {
  std::lock_guard lock(sessions_mutex_);
  sessions_.push_back(session);
}

void HttpServer::StopAccepting() {
  // Idempotent: the first call drains the WebSockets (Stop calls it again).
  if (!shared_->draining.exchange(true) && shared_->websocket != nullptr) {
    shared_->websocket->Drain();
  }
  net::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
  });
}

bool HttpServer::WaitWebSocketsClosed(std::chrono::milliseconds timeout) {
  return shared_->websocket == nullptr || shared_->websocket->WaitClosed(timeout);
}

bool HttpServer::WaitResponsesWritten(std::chrono::milliseconds timeout) {
  return shared_->open_exchanges.WaitNone(timeout);
}

void HttpServer::Stop() {
  {
    std::lock_guard lock(sessions_mutex_);
    if (stopped_) return;
    stopped_ = true;
    for (const auto& weak : sessions_) {
      if (auto session = weak.lock()) session->Close();
    }
  }
  if (shared_->websocket != nullptr) shared_->websocket->CloseAll();
  StopAccepting();
  // Let the posted closes run, then end the loop: sessions still held by in-flight work keep
  // their (closed) sockets until that work completes and drops them.
  net::post(io_context_, [this] { io_context_.stop(); });
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

}  // namespace voxserve::transport::http
