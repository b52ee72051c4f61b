// The WebSocket over one connection taken from an HTTP session: over plain TCP or TLS. Beast's
// websocket::stream is a template over the layer below; Visit() hands the connection's code
// whichever this one is, so that code is written once (as http::HttpStream does for HTTP).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <memory>
#include <utility>
#include <variant>

#include "transport/http/http_stream.h"

namespace voxserve::transport::websocket {

// Not thread safe: used on its connection's strand only.
class WebSocketStream {
 public:
  using Plain = boost::beast::websocket::stream<boost::asio::ip::tcp::socket>;
  using Tls = boost::beast::websocket::stream<http::HttpStream::TlsStream>;

  // Takes the connection (and its TLS context) out of `http`.
  explicit WebSocketStream(http::HttpStream& http)
      : tls_context_(http.tls_context()), stream_(Take(http)) {}

  // Calls op(stream) with the Beast stream.
  template <typename Operation>
  decltype(auto) Visit(Operation&& op) {
    return std::visit(std::forward<Operation>(op), stream_);
  }

  boost::asio::ip::tcp::socket& socket() {
    return Visit([](auto& stream) -> boost::asio::ip::tcp::socket& {
      return boost::beast::get_lowest_layer(stream);
    });
  }

 private:
  static std::variant<Plain, Tls> Take(http::HttpStream& http) {
    if (http::HttpStream::TlsStream* tls = http.tls()) {
      return std::variant<Plain, Tls>(std::in_place_type<Tls>, std::move(*tls));
    }
    return std::variant<Plain, Tls>(std::in_place_type<Plain>, std::move(http.socket()));
  }

  std::shared_ptr<boost::asio::ssl::context> tls_context_;  // declared first: outlives stream_
  std::variant<Plain, Tls> stream_;
};

}  // namespace voxserve::transport::websocket
