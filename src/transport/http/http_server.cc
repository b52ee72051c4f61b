#include "transport/http/http_server.h"

#include <boost/asio/strand.hpp>

#include "core/error.h"
#include "spdlog/spdlog.h"

namespace voxserve::transport::http {
namespace net = boost::asio;
using tcp = net::ip::tcp;

HttpServer::HttpServer(const HttpConfig& config, const Router& router, HttpMetrics& metrics)
    : acceptor_(io_context_), shared_(std::make_shared<SessionShared>()) {
  shared_->config = config;
  shared_->router = &router;
  shared_->metrics = &metrics;
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const HttpConfig& config,
                                                               const Router& router,
                                                               HttpMetrics& metrics) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::unique_ptr<HttpServer> server(new HttpServer(config, router, metrics));
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
    if (!ec) {
      tcp::no_delay no_delay(true);  // small chunks of streamed audio should leave at once
      socket.set_option(no_delay, ec);
      size_t open = 0;
      {
        std::lock_guard lock(sessions_mutex_);
        std::erase_if(sessions_, [](const auto& weak) { return weak.expired(); });
        open = sessions_.size();
      }
      if (open >= shared_->config.max_connections) {
        shared_->metrics->connections_refused.Increment();
        boost::system::error_code ignored;
        socket.close(ignored);
      } else {
        auto session = std::make_shared<HttpSession>(std::move(socket), shared_);
        Track(session);
        session->Start();
      }
    } else {
      spdlog::warn("accept failed: {}", ec.message());
    }
    Accept();
  });
}

void HttpServer::Track(const std::shared_ptr<HttpSession>& session) {
  std::lock_guard lock(sessions_mutex_);
  sessions_.push_back(session);
}

void HttpServer::StopAccepting() {
  shared_->draining.store(true);
  net::post(io_context_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
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
  StopAccepting();
  // Let the posted closes run, then end the loop: sessions still held by in-flight work keep
  // their (closed) sockets until that work completes and drops them.
  net::post(io_context_, [this] { io_context_.stop(); });
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

}  // namespace voxserve::transport::http
