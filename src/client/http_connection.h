// One HTTP/1.1 connection, plain or TLS, driven synchronously with deadlines: each step runs the
// connection's own io_context until the step completes or its deadline passes; then the socket is
// closed and the connection is dead. No thread of its own.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "client/endpoint.h"
#include "client/transport.h"

namespace voxserve::client {

struct ResponseHead {
  int status = 0;
  std::string content_type;
  std::string request_id;  // X-Request-Id
  int sample_rate = 0;     // X-Sample-Rate
  std::optional<int> retry_after_seconds;
};

// Used by one thread at a time: the pool lends it out exclusively.
class HttpConnection {
 public:
  // TCP connect (every resolved address in turn) and, with `tls`, the handshake with SNI and
  // host name verification against `server_name`. Errors: kConnect (also its timeout), kTls.
  static std::unique_ptr<HttpConnection> Connect(const Endpoint& endpoint,
                                                 boost::asio::ssl::context* tls,
                                                 const std::string& server_name, bool verify_peer,
                                                 Deadline deadline, Outcome* error);
  ~HttpConnection();

  // Sends a serialized request. Errors: kConnectionLost, kTimeout.
  Outcome Write(const std::string& request, Deadline deadline);
  // Reads the status line and headers. Errors: kConnectionLost (closed or reset first),
  // kTimeout, kProtocol.
  Outcome ReadHead(Deadline deadline, ResponseHead* head);
  // Reads the body (chunked, Content-Length or to EOF), passing each piece to `on_bytes`.
  Outcome ReadBody(Deadline deadline, const std::function<void(std::string_view)>& on_bytes);

  // The last response was read completely and both sides keep the connection open.
  bool reusable() const;
  Clock::time_point idle_since() const { return idle_since_; }
  void MarkIdle() { idle_since_ = Clock::now(); }

 private:
  explicit HttpConnection(boost::asio::ssl::context* tls);
  template <typename Start>
  boost::system::error_code Run(Deadline deadline, Start start);
  void CloseSocket();
  boost::asio::ip::tcp::socket& socket();

  using Parser = boost::beast::http::response_parser<boost::beast::http::buffer_body>;

  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket plain_;
  std::optional<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls_;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  bool broken_ = false;
  Clock::time_point idle_since_ = Clock::now();
};

}  // namespace voxserve::client
