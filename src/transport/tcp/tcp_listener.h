// One listening TCP port, for every TCP front end (HTTP with its WebSockets, Wyoming): its own
// io_context run by N I/O threads, an acceptor bound at Create (so the port is known, and a busy
// port fails there, not later), an accept loop that backs off after errors instead of spinning,
// and the stop. Each front end plugs its protocol in as the function that takes an accepted
// socket; what a connection then does (its limits, its idle timeout, its drain) is the protocol's,
// with ConnectionSet (transport/tcp/connection_set.h) for the bookkeeping they share.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::transport::tcp {

// Start, StopAccepting and Stop are for the server's main thread; port() is safe cross thread.
class TcpListener {
 public:
  // Runs on the acceptor's strand, one socket at a time: it must not block. The socket has a
  // strand of its own on io_context().
  using OnAccepted = std::function<void(boost::asio::ip::tcp::socket)>;

  // Binds `host` (an IP address) and `port` (0: any free port). `host_key` names the setting in
  // the error for a host that is no address ("http.host"); `name` names the listener in errors
  // and logs ("Wyoming").
  static absl::StatusOr<std::unique_ptr<TcpListener>> Create(const std::string& host, int port,
                                                             std::string_view host_key,
                                                             std::string_view name);
  ~TcpListener();  // Stop()

  int port() const { return port_; }
  boost::asio::io_context& io_context() { return io_context_; }

  // Starts accepting into `on_accepted` and `io_threads` threads running the io_context.
  void Start(int io_threads, OnAccepted on_accepted);
  // Closes the listening socket (on the acceptor's strand); open connections are left alone.
  void StopAccepting();
  // StopAccepting, then ends the loop and joins the I/O threads; what was queued behind the stop
  // (a close posted by the caller just before) then runs here, on the calling thread alone.
  // Connections still held by work elsewhere keep their (closed) sockets until it lets them go.
  void Stop();

 private:
  TcpListener(std::string name);
  void Accept();

  const std::string name_;
  boost::asio::io_context io_context_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_retry_;  // backs off after accept errors (out of fds)
  OnAccepted on_accepted_;
  int port_ = 0;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

}  // namespace voxserve::transport::tcp
