// HttpSession's start on a TLS listener: the first bytes decide between a handshake and a plain
// HTTP request sent to the TLS port (answered with a 400 in plain text, as nginx does).
#include <boost/asio/write.hpp>

#include "core/error.h"
#include "spdlog/spdlog.h"
#include "transport/http/error_response.h"
#include "transport/http/http_session.h"
#include "transport/tls/server_tls_context.h"

namespace voxserve::transport::http {
namespace net = boost::asio;

namespace {

// The first byte of a TLS connection: a handshake record (RFC 8446 §5.1).
constexpr unsigned char kTlsHandshakeRecord = 0x16;

}  // namespace

void HttpSession::StartTls() {
  awaiting_handshake_ = false;
  if (static_cast<const unsigned char*>(buffer_.data().data())[0] != kTlsHandshakeRecord) {
    return RefusePlainHttp();
  }
  // The bytes already read are the start of the ClientHello: the engine takes them first.
  stream_.tls()->async_handshake(
      net::ssl::stream_base::server, buffer_.data(),
      [self = shared_from_this()](boost::system::error_code ec, size_t bytes_used) {
        self->OnHandshake(ec, bytes_used);
      });
}

void HttpSession::OnHandshake(boost::system::error_code ec, size_t bytes_used) {
  read_timer_.cancel();
  if (closed_) return;
  if (ec) {
    shared_->metrics->tls_failures.WithLabels({"handshake"}).Increment();
    spdlog::debug("TLS handshake with {} failed: {}", remote_, ec.message());
    return CloseSocket();
  }
  buffer_.consume(bytes_used);
  // The handshake feeds the engine only what it asks for; bytes it left over would be TLS
  // records we cannot parse as HTTP. A conforming client sends none before the handshake ends.
  if (buffer_.size() > 0) return CloseSocket();
  stream_.set_tls_established();
  client_subject_ = tls::VerifiedPeerSubject(stream_.tls()->native_handle());
  WaitForRequest();
}

void HttpSession::RefusePlainHttp() {
  shared_->metrics->tls_failures.WithLabels({"plain_http"}).Increment();
  std::string body =
      ErrorJson(core::InvalidArgument("this port speaks HTTPS; use https://", {}, "tls_required"));
  auto response = std::make_shared<std::string>(
      "HTTP/1.1 400 Bad Request\r\nServer: voxserve\r\nContent-Type: application/json\r\n"
      "Connection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  buffer_.consume(buffer_.size());
  read_timer_.cancel();
  ArmTimer(write_timer_, shared_->config.write_timeout_ms);
  net::async_write(stream_.socket(), net::buffer(*response),
                   [self = shared_from_this(), response](boost::system::error_code ec, size_t) {
                     self->write_timer_.cancel();
                     if (ec) return self->CloseSocket();
                     self->LingerThenClose();
                   });
}

}  // namespace voxserve::transport::http
