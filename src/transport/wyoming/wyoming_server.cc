#include "transport/wyoming/wyoming_server.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>

#include "core/error.h"
#include "spdlog/spdlog.h"
#include "transport/wyoming/wyoming_events.h"

namespace voxserve::transport::wyoming {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// Wyoming clients are few (a home's Home Assistant and its satellites) and the I/O threads only
// frame and write audio; two keep one slow client's writes from delaying another's.
constexpr int kIoThreads = 2;
// After a failed accept (out of descriptors) the pending connection stays queued; retrying at
// once would spin a core.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);

// Over the connection limit: one error event, then the connection is closed (the frame is a
// few dozen bytes: the socket's buffer takes it at once).
void RefuseWithError(tcp::socket socket, std::string frame) {
  auto held =
      std::make_shared<std::pair<tcp::socket, std::string>>(std::move(socket), std::move(frame));
  net::async_write(held->first, net::buffer(held->second),
                   [held](boost::system::error_code, size_t) {
                     boost::system::error_code ignored;
                     held->first.shutdown(tcp::socket::shutdown_send, ignored);
                     held->first.close(ignored);
                   });
}

}  // namespace

WyomingServer::WyomingServer(const WyomingConfig& config, WyomingServerOptions options,
                             service::TtsService& service, core::MetricsRegistry& registry,
                             ClientAllowList allow)
    : config_(config),
      options_(std::move(options)),
      metrics_(registry),
      handler_env_{service, metrics_, options_.version},
      connection_env_{handler_env_, metrics_, config_.idle_timeout_ms, options_.write_timeout_ms,
                      [this] { OnConnectionDestroyed(); }},
      allow_(std::move(allow)),
      // The acceptor and its retry timer share a strand: accept handlers and StopAccepting's
      // close never run at once.
      acceptor_(net::make_strand(io_context_)),
      accept_retry_(acceptor_.get_executor()) {}

absl::StatusOr<std::unique_ptr<WyomingServer>> WyomingServer::Create(
    const WyomingConfig& config, WyomingServerOptions options, service::TtsService& service,
    core::MetricsRegistry& registry) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  absl::StatusOr<ClientAllowList> allow = ClientAllowList::Parse(config.allow);
  if (!allow.ok()) return allow.status();
  boost::system::error_code ec;
  net::ip::address address = net::ip::make_address(options.host, ec);
  if (ec) return core::InvalidArgument("wyoming.host '" + options.host + "' is not an IP address");
  std::unique_ptr<WyomingServer> server(
      new WyomingServer(config, std::move(options), service, registry, *std::move(allow)));
  tcp::endpoint endpoint(address, static_cast<unsigned short>(config.port));
  tcp::acceptor& acceptor = server->acceptor_;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError("cannot listen for Wyoming on " + server->options_.host + ":" +
                                  std::to_string(config.port) + ": " + ec.message());
  }
  server->port_ = acceptor.local_endpoint().port();
  return server;
}

WyomingServer::~WyomingServer() { Stop(); }

std::string WyomingServer::address() const { return options_.host + ":" + std::to_string(port_); }

void WyomingServer::Start() {
  Accept();
  for (int i = 0; i < kIoThreads; ++i) threads_.emplace_back([this] { io_context_.run(); });
}

void WyomingServer::Accept() {
  acceptor_.async_accept(net::make_strand(io_context_),
                         [this](boost::system::error_code ec, tcp::socket socket) {
                           if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
                           if (ec) {
                             spdlog::warn("Wyoming accept failed: {}; retrying in {} ms",
                                          ec.message(), kAcceptRetryDelay.count());
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

void WyomingServer::OnAccepted(tcp::socket socket) {
  boost::system::error_code ec;
  const tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  if (!allow_.Allows(peer.address())) {
    metrics_.CountRefused("not_allowed");
    spdlog::debug("Wyoming: refused {} (not in wyoming.allow)", peer.address().to_string());
    socket.close(ec);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);  // small audio chunks should leave at once
  std::shared_ptr<WyomingConnection> connection;
  bool drain = false;
  {
    std::lock_guard lock(mutex_);
    if (open_ >= config_.max_connections) {
      metrics_.CountRefused("limit");
      RefuseWithError(
          std::move(socket),
          ErrorFrame("too many connections (wyoming.max_connections)", "connection_limit"));
      return;
    }
    std::string remote = peer.address().to_string() + ":" + std::to_string(peer.port());
    connection =
        std::make_shared<WyomingConnection>(std::move(socket), std::move(remote), connection_env_);
    std::erase_if(connections_, [](const auto& weak) { return weak.expired(); });
    connections_.push_back(connection);
    ++open_;
    drain = draining_;
  }
  connection->Start();
  if (drain) connection->Drain();
}

void WyomingServer::OnConnectionDestroyed() {
  std::lock_guard lock(mutex_);
  if (--open_ == 0) all_closed_.notify_all();
}

void WyomingServer::StopAccepting() {
  std::vector<std::shared_ptr<WyomingConnection>> live;
  {
    std::lock_guard lock(mutex_);
    if (draining_) return;
    draining_ = true;
    for (const auto& weak : connections_) {
      if (auto connection = weak.lock()) live.push_back(std::move(connection));
    }
  }
  net::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
  });
  for (const auto& connection : live) connection->Drain();
}

bool WyomingServer::WaitClosed(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return all_closed_.wait_for(lock, timeout, [this] { return open_ == 0; });
}

void WyomingServer::Stop() {
  std::vector<std::shared_ptr<WyomingConnection>> live;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    for (const auto& weak : connections_) {
      if (auto connection = weak.lock()) live.push_back(std::move(connection));
    }
  }
  StopAccepting();
  for (const auto& connection : live) connection->Shutdown();
  live.clear();
  // Let the posted closes run, then end the loop: connections still held by running work keep
  // their (closed) sockets until that work completes and drops them.
  net::post(io_context_, [this] { io_context_.stop(); });
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  // A close posted behind the stop has not run: run what is queued now, on this thread alone.
  io_context_.restart();
  io_context_.poll();
}

}  // namespace voxserve::transport::wyoming
