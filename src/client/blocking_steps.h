// Synchronous steps over one connection's own io_context, shared by the HTTP connection and the
// WebSocket call: one asynchronous operation run to completion or to a deadline, and the TCP
// connect + TLS handshake every connection starts with.
#pragma once

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <string>

#include "client/endpoint.h"
#include "client/transport.h"

namespace voxserve::client {

// Starts one asynchronous operation (start(handler)) and runs `io` until it completes or
// `deadline` passes. On the deadline `on_timeout` must close the socket, which completes the
// operation with an error, and the result is timed_out.
template <typename Start, typename OnTimeout>
boost::system::error_code RunUntil(boost::asio::io_context& io, Deadline deadline, Start start,
                                   OnTimeout on_timeout) {
  boost::system::error_code result;
  bool done = false;
  start([&result, &done](const boost::system::error_code& ec, auto&&...) {
    result = ec;
    done = true;
  });
  io.restart();
  while (!done) {
    if (io.run_one_until(deadline) == 0 && !done && Clock::now() >= deadline) {
      on_timeout();
      io.restart();
      io.run();  // lets the operation complete with operation_aborted
      return boost::asio::error::timed_out;
    }
  }
  return result;
}

// TCP connect (every resolved address in turn, no Nagle delay) and, with `tls`, the handshake
// with SNI and host name verification against `server_name` (the endpoint's host when empty).
// `socket` is the TCP layer, under `tls` when there is one; it is closed on a timeout.
// Errors: kConnect (also its timeouts), kTls.
Outcome ConnectSocket(boost::asio::io_context& io, boost::asio::ip::tcp::socket& socket,
                      boost::asio::ssl::stream<boost::asio::ip::tcp::socket>* tls,
                      const Endpoint& endpoint, const std::string& server_name,
                      bool verify_peer, Deadline deadline);

}  // namespace voxserve::client
