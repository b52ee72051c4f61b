#include "transport/websocket/websocket_connection.h"

#include <boost/asio/post.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/websocket/error.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include "spdlog/spdlog.h"

namespace voxserve::transport::websocket {
namespace beast = boost::beast;
namespace net = boost::asio;
namespace ws = boost::beast::websocket;

namespace {

// A close frame holds 125 bytes of payload: the 2-byte code and a reason (RFC 6455 §5.5).
constexpr size_t kMaxCloseReasonBytes = 123;

std::string CloseReason(std::string reason) {
  if (reason.size() <= kMaxCloseReasonBytes) return reason;
  size_t cut = kMaxCloseReasonBytes;
  // Back to a character boundary: the reason must stay UTF-8.
  while (cut > 0 && (static_cast<unsigned char>(reason[cut]) & 0xC0) == 0x80) --cut;
  reason.resize(cut);
  return reason;
}

}  // namespace

WebSocketConnection::WebSocketConnection(http::UpgradeRequest request, ConnectionEnv& env,
                                         const ProtocolRoute& protocol)
    : env_(env),
      protocol_(protocol),
      upgrade_(std::move(request)),
      ws_(upgrade_.stream),
      executor_(ws_.socket().get_executor()),
      idle_timer_(executor_),
      write_timer_(executor_) {
  env_.metrics.connections.Add(1);
}

WebSocketConnection::~WebSocketConnection() {
  stream_.reset();  // cancels a running sentence
  env_.metrics.connections.Add(-1);
  if (env_.on_destroyed) env_.on_destroyed();
}

void WebSocketConnection::Start() {
  const auto target = upgrade_.message.target();
  StreamCaller caller{upgrade_.request_id,           std::move(upgrade_.caller),
                      std::move(upgrade_.admission), upgrade_.remote,
                      upgrade_.received_at,          std::string(target.data(), target.size()),
                      upgrade_.authenticated};
  stream_ = protocol_.make(
      ProtocolEnv{env_.service, env_.metrics, *this, weak_from_this(), std::move(caller)});
  const std::string request_id = upgrade_.request_id;
  ws_.Visit([&](auto& stream) {
    stream.set_option(ws::stream_base::decorator([request_id](ws::response_type& response) {
      response.set(beast::http::field::server, "voxserve");
      response.set("X-Request-Id", request_id);
    }));
    stream.read_message_max(env_.config.max_message_bytes);
  });
  SetKeepAlive(true);
  ws_.Visit([&](auto& stream) {
    stream.async_accept(upgrade_.message,
                        [self = shared_from_this()](boost::system::error_code ec) {
                          self->OnAccepted(ec);
                        });
  });
}

void WebSocketConnection::OnAccepted(boost::system::error_code ec) {
  env_.http_metrics.requests.WithLabels({protocol_.route, ec ? "400" : "101"}).Increment();
  if (ec) {
    // Beast has answered a malformed upgrade with 400 already.
    spdlog::debug("WebSocket handshake with {} failed: {}", upgrade_.remote, ec.message());
    env_.metrics.CountClosed("aborted");
    ended_ = true;
    stream_->OnConnectionEnded(ConnectionEnd::kHandshakeFailed, std::nullopt);
    boost::system::error_code ignored;
    ws_.socket().close(ignored);
    return;
  }
  open_ = true;
  upgrade_.message = {};
  ArmIdleTimer();
  ReadNext();
  if (drain_requested_) stream_->Drain();
}

// Beast's keep-alive counts only frames a pending read takes in: while reading is paused the
// client's pongs go unseen, so the idle check is off then and the write timer guards instead.
void WebSocketConnection::SetKeepAlive(bool on) {
  ws::stream_base::timeout timeout;
  timeout.handshake_timeout = std::chrono::milliseconds(env_.handshake_timeout_ms);
  timeout.idle_timeout =
      on ? std::chrono::milliseconds(2 * env_.config.ping_interval_ms) : ws::stream_base::none();
  timeout.keep_alive_pings = on;
  keep_alive_on_ = on;
  ws_.Visit([&](auto& stream) { stream.set_option(timeout); });
}

void WebSocketConnection::SetReading(bool reading) {
  reading_wanted_ = reading;
  if (!reading) return;
  if (held_) {
    // Posted: the stream is in the middle of a call that asked for this.
    net::post(executor_, [self = shared_from_this()] { self->DeliverHeld(); });
  } else {
    ReadNext();
  }
}

// Paused, a read stays pending until it brings one message: a client that closes or resets the
// connection while its sentences wait is noticed at once and their work dropped, not spoken.
void WebSocketConnection::ReadNext() {
  if (!open_ || ended_ || reading_ || close_started_) return;
  if (held_) {
    if (keep_alive_on_) SetKeepAlive(false);
    return;
  }
  if (!keep_alive_on_) SetKeepAlive(true);  // re-armed by the read below
  reading_ = true;
  ws_.Visit([&](auto& stream) {
    stream.async_read(read_buffer_, [self = shared_from_this()](boost::system::error_code ec,
                                                                size_t) { self->OnRead(ec); });
  });
}

void WebSocketConnection::OnRead(boost::system::error_code ec) {
  reading_ = false;
  if (ended_) return;
  if (ec) {
    // Our close's handshake completes in OnClosed; this read merely saw its reply.
    if (close_started_) return;
    if (ec == ws::error::message_too_big) return End(ConnectionEnd::kTooBig, std::nullopt);
    if (ec == ws::error::closed) {
      return End(ConnectionEnd::kByClient, ws_.Visit([](auto& stream) {
        return static_cast<int>(stream.reason().code);
      }));
    }
    // Beast's keep-alive found the client dead (no pong): cut off, not a departure it chose.
    return End(ConnectionEnd::kByClient, std::nullopt, ec == beast::error::timeout);
  }
  ArmIdleTimer();
  Message message{beast::buffers_to_string(read_buffer_.data()),
                  ws_.Visit([](auto& stream) { return stream.got_binary(); })};
  read_buffer_.consume(read_buffer_.size());
  if (reading_wanted_) {
    Deliver(std::move(message));
  } else {
    held_ = std::move(message);
  }
  ReadNext();
}

void WebSocketConnection::Deliver(Message message) {
  if (message.binary) {
    stream_->OnBinaryMessage();
  } else {
    stream_->OnMessage(message.bytes);
  }
}

void WebSocketConnection::DeliverHeld() {
  if (!held_ || !reading_wanted_ || ended_ || close_started_) return;
  Message message = *std::move(held_);
  held_.reset();
  Deliver(std::move(message));
  ReadNext();
}

void WebSocketConnection::SendEvent(std::string json) { Enqueue({std::move(json), false}); }

void WebSocketConnection::SendAudioEvent(std::string json) {
  if (ended_ || close_) return;
  queued_audio_bytes_.fetch_add(json.size());
  Enqueue({std::move(json), false, true});
}

void WebSocketConnection::PostAudio(std::string bytes) {
  queued_audio_bytes_.fetch_add(bytes.size());
  net::post(executor_, [self = shared_from_this(), bytes = std::move(bytes)]() mutable {
    self->QueueAudio(std::move(bytes));
  });
}

void WebSocketConnection::QueueAudio(std::string bytes) {
  if (ended_ || close_ || bytes.empty()) {
    queued_audio_bytes_.fetch_sub(bytes.size());
    return;
  }
  env_.metrics.CountMessage("out", "audio");
  Enqueue({std::move(bytes), true, true});
}

void WebSocketConnection::Post(absl::AnyInvocable<void() &&> task) {
  net::post(executor_, [self = shared_from_this(), task = std::move(task)]() mutable {
    std::move(task)();
  });
}

void WebSocketConnection::Enqueue(Frame frame) {
  if (ended_ || close_) return;  // audio was counted by QueueAudio, which checked the same
  outgoing_.push_back(std::move(frame));
  if (!writing_) WriteNext();
}

void WebSocketConnection::WriteNext() {
  if (ended_) return;
  if (outgoing_.empty()) {
    if (close_ && !close_started_) StartClose();
    return;
  }
  writing_ = true;
  const Frame& frame = outgoing_.front();  // a deque keeps it in place while others are pushed
  write_timer_.expires_after(std::chrono::milliseconds(env_.write_timeout_ms));
  write_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->Abort();  // the client accepted nothing for write_timeout_ms
  });
  ws_.Visit([&](auto& stream) {
    stream.binary(frame.binary);
    stream.async_write(net::buffer(frame.bytes),
                       [self = shared_from_this()](boost::system::error_code ec, size_t) {
                         self->OnWritten(ec);
                       });
  });
}

void WebSocketConnection::OnWritten(boost::system::error_code ec) {
  write_timer_.cancel();
  writing_ = false;
  const bool audio = !outgoing_.empty() && outgoing_.front().audio;
  if (!outgoing_.empty()) {
    if (audio) queued_audio_bytes_.fetch_sub(outgoing_.front().bytes.size());
    outgoing_.pop_front();
  }
  if (ended_) return;
  if (ec) return End(ConnectionEnd::kByClient, std::nullopt);
  if (audio) stream_->OnAudioWritten();
  WriteNext();
}

void WebSocketConnection::Close(CloseCode code, std::string reason) {
  if (ended_ || close_) return;
  close_.emplace(code, CloseReason(std::move(reason)));
  if (!writing_) WriteNext();
}

void WebSocketConnection::StartClose() {
  close_started_ = true;
  idle_timer_.cancel();
  ws::close_reason reason(static_cast<ws::close_code>(close_->first), close_->second);
  ws_.Visit([&](auto& stream) {
    stream.async_close(reason, [self = shared_from_this()](boost::system::error_code) {
      // Done, failed or timed out (Beast's handshake timeout): the socket is finished either way.
      self->End(ConnectionEnd::kClosed, std::nullopt);
    });
  });
}

void WebSocketConnection::ArmIdleTimer() {
  idle_timer_.expires_after(std::chrono::milliseconds(env_.config.idle_timeout_ms));
  idle_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->OnIdleTimer();
  });
}

void WebSocketConnection::OnIdleTimer() {
  if (ended_ || close_) return;
  if (stream_->Busy()) return ArmIdleTimer();  // audio is still coming: not idle
  stream_->OnIdleTimeout();
}

void WebSocketConnection::Drain() {
  net::post(executor_, [self = shared_from_this()] {
    if (self->ended_) return;
    if (!self->open_) {
      self->drain_requested_ = true;  // the handshake is under way: drain once it is done
      return;
    }
    self->stream_->Drain();
  });
}

void WebSocketConnection::Shutdown() {
  net::post(executor_, [self = shared_from_this()] { self->Abort(); });
}

void WebSocketConnection::Abort() { End(ConnectionEnd::kByClient, std::nullopt, true); }

void WebSocketConnection::End(ConnectionEnd end, std::optional<int> client_close_code,
                              bool aborted) {
  if (ended_) return;
  ended_ = true;
  if (close_started_) {
    env_.metrics.CountClosed(std::to_string(static_cast<int>(close_->first)));
  } else if (end == ConnectionEnd::kTooBig) {
    env_.metrics.CountClosed(std::to_string(static_cast<int>(CloseCode::kTooBig)));
  } else {
    env_.metrics.CountClosed(aborted ? "aborted" : "client");
  }
  idle_timer_.cancel();
  write_timer_.cancel();
  // Pending operations end with operation_aborted; Beast has torn down already if it closed.
  boost::system::error_code ignored;
  ws_.socket().close(ignored);
  const size_t in_flight = writing_ ? 1 : 0;  // its buffer stays until its handler has run
  for (size_t i = in_flight; i < outgoing_.size(); ++i) {
    if (outgoing_[i].audio) queued_audio_bytes_.fetch_sub(outgoing_[i].bytes.size());
  }
  outgoing_.erase(outgoing_.begin() + static_cast<std::ptrdiff_t>(in_flight), outgoing_.end());
  stream_->OnConnectionEnded(end, client_close_code);
}

}  // namespace voxserve::transport::websocket
