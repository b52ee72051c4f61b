#include "client/http_connection.h"

#include <boost/asio/ssl/error.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>

#include "absl/strings/numbers.h"
#include "client/blocking_steps.h"

namespace voxserve::client {
namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

namespace {

// Audio for one request: 1 GiB is hours of WAV; a bound still stops a runaway peer.
constexpr std::uint64_t kMaxBodyBytes = 1ULL << 30;
// Bytes handed to the caller per read; chunks of streamed audio are usually smaller.
constexpr size_t kReadBytes = 16 * 1024;

}  // namespace

HttpConnection::HttpConnection(net::ssl::context* tls) : plain_(io_) {
  if (tls != nullptr) tls_.emplace(io_, *tls);
}

HttpConnection::~HttpConnection() { CloseSocket(); }

tcp::socket& HttpConnection::socket() { return tls_ ? tls_->next_layer() : plain_; }

void HttpConnection::CloseSocket() {
  boost::system::error_code ignored;
  socket().close(ignored);
}

// One step to completion or until `deadline`; a step cut by the deadline breaks the connection
// for good.
template <typename Start>
boost::system::error_code HttpConnection::Run(Deadline deadline, Start start) {
  return RunUntil(io_, deadline, start, [this] {
    broken_ = true;
    CloseSocket();
  });
}

std::unique_ptr<HttpConnection> HttpConnection::Connect(const Endpoint& endpoint,
                                                        net::ssl::context* tls,
                                                        const std::string& server_name,
                                                        bool verify_peer, Deadline deadline,
                                                        Outcome* error) {
  std::unique_ptr<HttpConnection> connection(new HttpConnection(tls));
  *error = ConnectSocket(connection->io_, connection->socket(),
                         connection->tls_ ? &*connection->tls_ : nullptr, endpoint, server_name,
                         verify_peer, deadline);
  if (!error->ok()) return nullptr;
  return connection;
}

Outcome HttpConnection::Write(const std::string& request, Deadline deadline) {
  auto ec = Run(deadline, [&](auto handler) {
    if (tls_) {
      net::async_write(*tls_, net::buffer(request), handler);
    } else {
      net::async_write(plain_, net::buffer(request), handler);
    }
  });
  if (!ec) return {};
  broken_ = true;
  if (ec == net::error::timed_out)
    return Outcome::Error(ErrorKind::kTimeout, "timed out sending the request");
  return Outcome::Error(ErrorKind::kConnectionLost,
                        "connection lost sending the request: " + ec.message());
}

Outcome HttpConnection::ReadHead(Deadline deadline, ResponseHead* head) {
  parser_.emplace();
  parser_->body_limit(kMaxBodyBytes);
  auto ec = Run(deadline, [&](auto handler) {
    if (tls_) {
      bhttp::async_read_header(*tls_, buffer_, *parser_, handler);
    } else {
      bhttp::async_read_header(plain_, buffer_, *parser_, handler);
    }
  });
  if (ec) {
    broken_ = true;
    if (ec == net::error::timed_out)
      return Outcome::Error(ErrorKind::kTimeout, "timed out waiting for the response");
    if (ec == bhttp::error::end_of_stream || ec == net::error::eof ||
        ec == net::error::connection_reset || ec == net::ssl::error::stream_truncated ||
        ec == bhttp::error::partial_message) {
      return Outcome::Error(
          ErrorKind::kConnectionLost,
          "the server closed the connection before answering (" + ec.message() + ")");
    }
    if (ec.category() == net::error::get_ssl_category()) {
      // TLS 1.3 servers refuse a client certificate after the handshake: an alert on first read.
      return Outcome::Error(ErrorKind::kTls, "TLS error from the server: " + ec.message());
    }
    return Outcome::Error(ErrorKind::kProtocol, "bad response head: " + ec.message());
  }
  const auto& message = parser_->get();
  head->status = static_cast<int>(message.result_int());
  head->content_type = std::string(message[bhttp::field::content_type]);
  head->request_id = std::string(message["X-Request-Id"]);
  int number = 0;
  if (absl::SimpleAtoi(std::string(message["X-Sample-Rate"]), &number)) head->sample_rate = number;
  if (absl::SimpleAtoi(std::string(message[bhttp::field::retry_after]), &number) && number >= 0) {
    head->retry_after_seconds = number;
  }
  return {};
}

Outcome HttpConnection::ReadBody(Deadline deadline,
                                 const std::function<void(std::string_view)>& on_bytes) {
  char bytes[kReadBytes];
  while (!parser_->is_done()) {
    auto& body = parser_->get().body();
    body.data = bytes;
    body.size = sizeof bytes;
    auto ec = Run(deadline, [&](auto handler) {
      if (tls_) {
        bhttp::async_read_some(*tls_, buffer_, *parser_, handler);
      } else {
        bhttp::async_read_some(plain_, buffer_, *parser_, handler);
      }
    });
    if (ec == bhttp::error::need_buffer) ec = {};
    size_t got = sizeof bytes - parser_->get().body().size;
    if (got > 0) on_bytes(std::string_view(bytes, got));
    if (ec) {
      broken_ = true;
      if (ec == net::error::timed_out)
        return Outcome::Error(ErrorKind::kTimeout, "timed out reading the response body");
      return Outcome::Error(ErrorKind::kConnectionLost,
                            "connection lost in the response body: " + ec.message());
    }
  }
  return {};
}

bool HttpConnection::reusable() const {
  return !broken_ && parser_ && parser_->is_done() && parser_->get().keep_alive();
}

}  // namespace voxserve::client
