#include "client/http_connection.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>

#include "absl/strings/numbers.h"

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

// Runs one asynchronous step to completion or until `deadline`; on the deadline the socket is
// closed (which completes the step with an error) and the connection is broken for good.
template <typename Start>
boost::system::error_code HttpConnection::Run(Deadline deadline, Start start) {
  boost::system::error_code result;
  bool done = false;
  start([&result, &done](const boost::system::error_code& ec, auto&&...) {
    result = ec;
    done = true;
  });
  io_.restart();
  while (!done) {
    if (io_.run_one_until(deadline) == 0 && !done && Clock::now() >= deadline) {
      broken_ = true;
      CloseSocket();
      io_.restart();
      io_.run();  // lets the step complete with operation_aborted
      return net::error::timed_out;
    }
  }
  return result;
}

std::unique_ptr<HttpConnection> HttpConnection::Connect(const Endpoint& endpoint,
                                                        net::ssl::context* tls,
                                                        const std::string& server_name,
                                                        bool verify_peer, Deadline deadline,
                                                        Outcome* error) {
  std::unique_ptr<HttpConnection> connection(new HttpConnection(tls));
  tcp::resolver resolver(connection->io_);
  tcp::resolver::results_type addresses;
  auto ec = connection->Run(deadline, [&](auto handler) {
    resolver.async_resolve(endpoint.host, endpoint.port,
                           [&addresses, handler](const boost::system::error_code& e,
                                                 tcp::resolver::results_type results) mutable {
                             addresses = std::move(results);
                             handler(e);
                           });
  });
  std::string where = endpoint.HostHeader();
  if (ec) {
    *error =
        Outcome::Error(ErrorKind::kConnect,
                       "cannot resolve " + endpoint.host + ": " +
                           (ec == net::error::timed_out ? std::string("timed out") : ec.message()));
    return nullptr;
  }
  ec = connection->Run(deadline, [&](auto handler) {
    net::async_connect(connection->socket(), addresses, handler);
  });
  if (ec) {
    *error = Outcome::Error(ErrorKind::kConnect,
                            "cannot connect to " + where + ": " +
                                (ec == net::error::timed_out ? "connect timeout" : ec.message()));
    return nullptr;
  }
  boost::system::error_code ignored;
  connection->socket().set_option(tcp::no_delay(true), ignored);
  if (connection->tls_) {
    auto& stream = *connection->tls_;
    const std::string& name = server_name.empty() ? endpoint.host : server_name;
    SSL_set_tlsext_host_name(stream.native_handle(), name.c_str());
    stream.set_verify_mode(verify_peer ? net::ssl::verify_peer : net::ssl::verify_none, ignored);
    if (verify_peer) stream.set_verify_callback(net::ssl::host_name_verification(name), ignored);
    ec = connection->Run(deadline, [&](auto handler) {
      stream.async_handshake(net::ssl::stream_base::client, handler);
    });
    if (ec == net::error::timed_out) {
      *error = Outcome::Error(ErrorKind::kConnect, "TLS handshake with " + where + " timed out");
      return nullptr;
    }
    if (ec) {
      *error = Outcome::Error(ErrorKind::kTls,
                              "TLS handshake with " + where + " failed: " + ec.message());
      return nullptr;
    }
  }
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
