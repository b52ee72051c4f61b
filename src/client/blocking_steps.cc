#include "client/blocking_steps.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

namespace voxserve::client {
namespace net = boost::asio;
using tcp = net::ip::tcp;

Outcome ConnectSocket(net::io_context& io, tcp::socket& socket,
                      net::ssl::stream<tcp::socket>* tls, const Endpoint& endpoint,
                      const std::string& server_name, bool verify_peer, Deadline deadline) {
  auto run = [&](auto start) {
    return RunUntil(io, deadline, start, [&socket] {
      boost::system::error_code ignored;
      socket.close(ignored);
    });
  };
  tcp::resolver resolver(io);
  tcp::resolver::results_type addresses;
  auto ec = run([&](auto handler) {
    resolver.async_resolve(endpoint.host, endpoint.port,
                           [&addresses, handler](const boost::system::error_code& e,
                                                 tcp::resolver::results_type results) mutable {
                             addresses = std::move(results);
                             handler(e);
                           });
  });
  auto why = [&ec](const char* timeout) {
    return ec == net::error::timed_out ? std::string(timeout) : ec.message();
  };
  if (ec) {
    return Outcome::Error(ErrorKind::kConnect,
                          "cannot resolve " + endpoint.host + ": " + why("timed out"));
  }
  const std::string where = endpoint.HostHeader();
  ec = run([&](auto handler) { net::async_connect(socket, addresses, handler); });
  if (ec) {
    return Outcome::Error(ErrorKind::kConnect,
                          "cannot connect to " + where + ": " + why("connect timeout"));
  }
  boost::system::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  if (tls == nullptr) return {};
  const std::string& name = server_name.empty() ? endpoint.host : server_name;
  SSL_set_tlsext_host_name(tls->native_handle(), name.c_str());
  tls->set_verify_mode(verify_peer ? net::ssl::verify_peer : net::ssl::verify_none, ignored);
  if (verify_peer) tls->set_verify_callback(net::ssl::host_name_verification(name), ignored);
  ec = run([&](auto handler) { tls->async_handshake(net::ssl::stream_base::client, handler); });
  if (ec == net::error::timed_out) {
    return Outcome::Error(ErrorKind::kConnect, "TLS handshake with " + where + " timed out");
  }
  if (ec) {
    return Outcome::Error(ErrorKind::kTls,
                          "TLS handshake with " + where + " failed: " + ec.message());
  }
  return {};
}

}  // namespace voxserve::client
