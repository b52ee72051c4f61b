// The byte stream under one HTTP connection: plain TCP, or TLS over TCP. Beast's algorithms are
// templates over the stream type; Visit() hands them whichever this connection has, so the
// session's logic is written once. A later WebSocket upgrade takes the stream the same way.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <memory>
#include <utility>
#include <variant>

namespace voxserve::transport::http {

// Not thread safe: used on its session's strand only.
class HttpStream {
 public:
  using TlsStream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;

  explicit HttpStream(boost::asio::ip::tcp::socket socket)
      : stream_(std::in_place_type<boost::asio::ip::tcp::socket>, std::move(socket)) {}
  // Keeps `context` alive as long as the connection: a certificate reload swaps the server's
  // context, not this one.
  HttpStream(boost::asio::ip::tcp::socket socket,
             std::shared_ptr<boost::asio::ssl::context> context)
      : stream_(std::in_place_type<TlsStream>, std::move(socket), *context),
        tls_context_(std::move(context)) {}

  bool is_tls() const { return std::holds_alternative<TlsStream>(stream_); }
  TlsStream* tls() { return std::get_if<TlsStream>(&stream_); }
  // The context a TLS connection keeps alive (null for plain TCP); a WebSocket upgrade that takes
  // the stream over keeps it too.
  const std::shared_ptr<boost::asio::ssl::context>& tls_context() const { return tls_context_; }
  // After the handshake, reads and writes go through TLS; before it (and on plain connections)
  // straight to the socket, so the first bytes can be inspected.
  void set_tls_established() { tls_established_ = true; }

  boost::asio::ip::tcp::socket& socket() {
    return std::visit(
        [](auto& stream) -> boost::asio::ip::tcp::socket& {
          if constexpr (std::is_same_v<std::decay_t<decltype(stream)>, TlsStream>) {
            return stream.next_layer();
          } else {
            return stream;
          }
        },
        stream_);
  }

  // Calls op(stream) with the stream that carries HTTP now.
  template <typename Operation>
  void Visit(Operation&& op) {
    if (TlsStream* tls_stream = tls(); tls_stream != nullptr && tls_established_) {
      op(*tls_stream);
    } else {
      op(socket());
    }
  }

 private:
  std::variant<boost::asio::ip::tcp::socket, TlsStream> stream_;
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  bool tls_established_ = false;
};

}  // namespace voxserve::transport::http
