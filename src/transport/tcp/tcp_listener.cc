#include "transport/tcp/tcp_listener.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include "core/error.h"
#include "spdlog/spdlog.h"

namespace voxserve::transport::tcp {
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// After a failed accept (EMFILE, ENFILE, ENOBUFS: out of descriptors or memory) the pending
// connection stays queued; retrying at once would spin a core. A short pause lets sessions close.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);

}  // namespace

TcpListener::TcpListener(std::string name)
    // The acceptor and its retry timer share a strand: accept handlers and StopAccepting's close
    // never run at once.
    : name_(std::move(name)),
      acceptor_(net::make_strand(io_context_)),
      accept_retry_(acceptor_.get_executor()) {}

absl::StatusOr<std::unique_ptr<TcpListener>> TcpListener::Create(const std::string& host,
                                                                 int port,
                                                                 std::string_view host_key,
                                                                 std::string_view name) {
  boost::system::error_code ec;
  net::ip::address address = net::ip::make_address(host, ec);
  if (ec) {
    return core::InvalidArgument(std::string(host_key) + " '" + host + "' is not an IP address");
  }
  std::unique_ptr<TcpListener> listener(new TcpListener(std::string(name)));
  tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  tcp::acceptor& acceptor = listener->acceptor_;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError("cannot listen for " + std::string(name) + " on " + host + ":" +
                                  std::to_string(port) + ": " + ec.message());
  }
  listener->port_ = acceptor.local_endpoint().port();
  return listener;
}

TcpListener::~TcpListener() { Stop(); }

void TcpListener::Start(int io_threads, OnAccepted on_accepted) {
  on_accepted_ = std::move(on_accepted);
  Accept();
  for (int i = 0; i < io_threads; ++i) threads_.emplace_back([this] { io_context_.run(); });
}

void TcpListener::Accept() {
  acceptor_.async_accept(net::make_strand(io_context_), [this](boost::system::error_code ec,
                                                               tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      spdlog::warn("{}: accept failed: {}; retrying in {} ms", name_, ec.message(),
                   kAcceptRetryDelay.count());
      accept_retry_.expires_after(kAcceptRetryDelay);
      accept_retry_.async_wait([this](boost::system::error_code wait_ec) {
        if (!wait_ec) Accept();
      });
      return;
    }
    on_accepted_(std::move(socket));
    Accept();
  });
}

void TcpListener::StopAccepting() {
  net::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
  });
}

void TcpListener::Stop() {
  if (stopped_) return;
  stopped_ = true;
  StopAccepting();
  // Let what was posted before (the closes) run, then end the loop.
  net::post(io_context_, [this] { io_context_.stop(); });
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  // A close posted behind the stop has not run: run what is queued now, on this thread alone.
  io_context_.restart();
  io_context_.poll();
}

}  // namespace voxserve::transport::tcp
