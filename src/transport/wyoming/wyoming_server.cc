#include "transport/wyoming/wyoming_server.h"

#include <boost/asio/write.hpp>

#include "spdlog/spdlog.h"
#include "transport/wyoming/wyoming_events.h"

namespace voxserve::transport::wyoming {
namespace net = boost::asio;
using Socket = net::ip::tcp::socket;

namespace {

// Wyoming clients are few (a home's Home Assistant and its satellites) and the I/O threads only
// frame and write audio; two keep one slow client's writes from delaying another's.
constexpr int kIoThreads = 2;

// Over the connection limit: one error event, then the connection is closed (the frame is a
// few dozen bytes: the socket's buffer takes it at once).
void RefuseWithError(Socket socket, std::string frame) {
  auto held = std::make_shared<std::pair<Socket, std::string>>(std::move(socket), std::move(frame));
  net::async_write(held->first, net::buffer(held->second),
                   [held](boost::system::error_code, size_t) {
                     boost::system::error_code ignored;
                     held->first.shutdown(Socket::shutdown_send, ignored);
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
                      [this] { connections_.Closed(); }},
      allow_(std::move(allow)) {}

absl::StatusOr<std::unique_ptr<WyomingServer>> WyomingServer::Create(
    const WyomingConfig& config, WyomingServerOptions options, service::TtsService& service,
    core::MetricsRegistry& registry) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  absl::StatusOr<ClientAllowList> allow = ClientAllowList::Parse(config.allow);
  if (!allow.ok()) return allow.status();
  auto listener = tcp::TcpListener::Create(options.host, config.port, "wyoming.host", "Wyoming");
  if (!listener.ok()) return listener.status();
  std::unique_ptr<WyomingServer> server(
      new WyomingServer(config, std::move(options), service, registry, *std::move(allow)));
  server->listener_ = *std::move(listener);
  return server;
}

WyomingServer::~WyomingServer() { Stop(); }

std::string WyomingServer::address() const { return options_.host + ":" + std::to_string(port()); }

void WyomingServer::Start() {
  listener_->Start(kIoThreads, [this](Socket socket) { OnAccepted(std::move(socket)); });
}

void WyomingServer::OnAccepted(Socket socket) {
  boost::system::error_code ec;
  const net::ip::tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return;  // gone already
  if (!allow_.Allows(peer.address())) {
    metrics_.CountRefused("not_allowed");
    spdlog::debug("Wyoming: refused {} (not in wyoming.allow)", peer.address().to_string());
    socket.close(ec);
    return;
  }
  socket.set_option(net::ip::tcp::no_delay(true), ec);  // small audio chunks should leave at once
  auto connection = connections_.Add(
      [&] {
        return std::make_shared<WyomingConnection>(
            std::move(socket), peer.address().to_string() + ":" + std::to_string(peer.port()),
            connection_env_);
      },
      config_.max_connections);
  if (connection != nullptr) return;
  metrics_.CountRefused("limit");
  RefuseWithError(std::move(socket),
                  ErrorFrame("too many connections (wyoming.max_connections)", "connection_limit"));
}

void WyomingServer::StopAccepting() {
  if (connections_.Drain()) listener_->StopAccepting();
}

bool WyomingServer::WaitClosed(std::chrono::milliseconds timeout) {
  return connections_.WaitClosed(timeout);
}

void WyomingServer::Stop() {
  if (stopped_.exchange(true)) return;
  StopAccepting();
  for (const auto& connection : connections_.Live()) connection->Shutdown();
  listener_->Stop();
}

}  // namespace voxserve::transport::wyoming
