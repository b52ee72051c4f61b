#include "transport/wyoming/wyoming_connection.h"

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <vector>

#include "spdlog/spdlog.h"

namespace voxserve::transport::wyoming {
namespace net = boost::asio;

namespace {

// What a client's event may hold. A synthesize's text is at most limits.max_input_chars
// (4096 by default; JSON-escaped CJK is 6 bytes a character, 24 KiB); 256 KiB leaves room for a
// raised limit. A TTS server takes no audio, so a payload is only ever skipped: 64 KiB is plenty
// for a client that sends one anyway.
FrameLimits ClientEventLimits() {
  FrameLimits limits;
  limits.max_data_bytes = 256 << 10;
  limits.max_payload_bytes = 64 << 10;
  return limits;
}

// One write takes what is queued up to this much: an audio-chunk is 2 KiB, so many go at once.
constexpr size_t kMaxWriteBytes = 256 << 10;
// Events are taken only while less than this waits to be written (an info reply listing every
// voice is ~23 KiB): beyond it the connection stops reading, TCP holds the client back, and a
// client that never reads is cut off by the write timeout. Audio is bounded by the handler.
constexpr size_t kMaxOutgoingBytes = 1 << 20;
// After our side is shut down, how long the client may take to close its own: time for the last
// bytes to be read, not a reason to keep a descriptor.
constexpr auto kLinger = std::chrono::seconds(1);

}  // namespace

WyomingConnection::WyomingConnection(net::ip::tcp::socket socket, std::string remote,
                                     ConnectionEnv& env)
    : env_(env),
      socket_(std::move(socket)),
      remote_(std::move(remote)),
      idle_timer_(socket_.get_executor()),
      write_timer_(socket_.get_executor()),
      parser_(ClientEventLimits()) {
  env_.metrics.connections.Add(1);
}

WyomingConnection::~WyomingConnection() {
  handler_.reset();  // cancels work still running
  env_.metrics.connections.Add(-1);
  if (env_.on_destroyed) env_.on_destroyed();
}

void WyomingConnection::Start() {
  net::post(socket_.get_executor(), [self = shared_from_this()] {
    self->handler_ = std::make_unique<EventHandler>(self->env_.handler, *self,
                                                    self->weak_from_this(), self->remote_);
    self->ArmIdleTimer();
    self->ReadNext();
  });
}

void WyomingConnection::Drain() {
  net::post(socket_.get_executor(), [self = shared_from_this()] {
    if (!self->ended_ && self->handler_ != nullptr) self->handler_->Drain();
  });
}

void WyomingConnection::Shutdown() {
  net::post(socket_.get_executor(), [self = shared_from_this()] { self->End(); });
}

void WyomingConnection::Post(absl::AnyInvocable<void() &&> task) {
  net::post(socket_.get_executor(),
            [self = shared_from_this(), task = std::move(task)]() mutable { std::move(task)(); });
}

bool WyomingConnection::Backlogged() const { return outgoing_bytes_ >= kMaxOutgoingBytes; }

// While an event is held, or replies wait unread, nothing is read (TCP holds the client back);
// otherwise a read stays pending, so a client that leaves while its work runs is noticed at once
// and the work dropped.
void WyomingConnection::ReadNext() {
  if (ended_ || reading_) return;
  if (!lingering_ && (close_requested_ || held_ || Backlogged())) return;
  reading_ = true;
  socket_.async_read_some(net::buffer(read_buffer_),
                          [self = shared_from_this()](boost::system::error_code ec, size_t bytes) {
                            self->OnRead(ec, bytes);
                          });
}

void WyomingConnection::OnRead(boost::system::error_code ec, size_t bytes) {
  reading_ = false;
  if (ended_) return;
  // EOF or a reset: the client has gone (a half-close counts: Wyoming has no use for one).
  if (ec) return End();
  if (lingering_) return ReadNext();  // the client's last bytes, dropped
  if (close_requested_) return;
  parser_.Append(std::string_view(read_buffer_.data(), bytes));
  Pump();
}

void WyomingConnection::Pump() {
  if (pumping_) return;  // SetReading(true) from inside an event: the loop below goes on
  pumping_ = true;
  while (!ended_ && !close_requested_ && reading_wanted_ && !Backlogged()) {
    std::optional<Event> event;
    if (held_) {
      event = std::move(held_);
      held_.reset();
    } else {
      absl::StatusOr<std::optional<Event>> next = parser_.Next();
      if (!next.ok()) {
        handler_->OnBadFrame(next.status());
        break;
      }
      if (!*next) break;
      event = std::move(*next);
    }
    ArmIdleTimer();
    handler_->OnEvent(*std::move(event));
  }
  // Paused: one event is held, and reading stops until it is taken.
  if (!ended_ && !close_requested_ && !reading_wanted_ && !held_ && !Backlogged()) {
    absl::StatusOr<std::optional<Event>> next = parser_.Next();
    if (!next.ok()) {
      handler_->OnBadFrame(next.status());
    } else if (*next) {
      held_ = std::move(*next);
    }
  }
  pumping_ = false;
  ReadNext();
}

void WyomingConnection::SetReading(bool reading) {
  const bool resumed = reading && !reading_wanted_;
  reading_wanted_ = reading;
  // Posted: the handler is in the middle of a call that asked for this.
  if (resumed) net::post(socket_.get_executor(), [self = shared_from_this()] { self->Pump(); });
}

void WyomingConnection::Send(std::string frame, size_t audio_bytes) {
  if (ended_ || close_requested_) {
    queued_audio_bytes_.fetch_sub(audio_bytes);
    return;
  }
  outgoing_bytes_ += frame.size();
  outgoing_.push_back({std::move(frame), audio_bytes});
  if (writing_ == 0) WriteNext();
}

void WyomingConnection::Close() {
  if (ended_ || close_requested_) return;
  close_requested_ = true;
  if (writing_ == 0) WriteNext();
}

void WyomingConnection::WriteNext() {
  if (ended_) return;
  if (outgoing_.empty()) {
    if (close_requested_ && !lingering_) Linger();
    return;
  }
  // A deque keeps its elements in place while more are pushed: the buffers stay valid.
  std::vector<net::const_buffer> buffers;
  size_t bytes = 0;
  for (const Frame& frame : outgoing_) {
    if (!buffers.empty() && bytes + frame.bytes.size() > kMaxWriteBytes) break;
    buffers.push_back(net::buffer(frame.bytes));
    bytes += frame.bytes.size();
  }
  writing_ = buffers.size();
  write_timer_.expires_after(std::chrono::milliseconds(env_.write_timeout_ms));
  write_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->End();  // the client accepted nothing for write_timeout_ms
  });
  net::async_write(
      socket_, buffers,
      [self = shared_from_this()](boost::system::error_code ec, size_t) { self->OnWritten(ec); });
}

void WyomingConnection::OnWritten(boost::system::error_code ec) {
  write_timer_.cancel();
  const bool was_backlogged = Backlogged();
  size_t audio = 0;
  for (; writing_ > 0 && !outgoing_.empty(); --writing_) {
    audio += outgoing_.front().audio_bytes;
    outgoing_bytes_ -= outgoing_.front().bytes.size();
    outgoing_.pop_front();
  }
  writing_ = 0;
  queued_audio_bytes_.fetch_sub(audio);
  if (ended_) return;
  if (ec) return End();  // the client has gone
  if (audio > 0) handler_->OnAudioWritten();
  WriteNext();
  if (was_backlogged && !Backlogged()) Pump();  // the events that waited, then reading again
}

// Everything is written: our side is shut down, so the client reads to the end (closing with its
// bytes unread would reset the connection and could destroy what was sent), then it closes.
void WyomingConnection::Linger() {
  lingering_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  idle_timer_.expires_after(kLinger);
  idle_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->End();
  });
  ReadNext();
}

void WyomingConnection::ArmIdleTimer() {
  if (lingering_) return;
  idle_timer_.expires_after(std::chrono::milliseconds(env_.idle_timeout_ms));
  idle_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->OnIdleTimer();
  });
}

void WyomingConnection::OnIdleTimer() {
  if (ended_ || lingering_ || close_requested_) return;
  if (handler_->Busy()) return ArmIdleTimer();  // audio is still coming: not idle
  handler_->OnIdleTimeout();
}

void WyomingConnection::End() {
  if (ended_) return;
  ended_ = true;
  idle_timer_.cancel();
  write_timer_.cancel();
  // Pending operations end with operation_aborted.
  boost::system::error_code ignored;
  socket_.close(ignored);
  for (size_t i = writing_; i < outgoing_.size(); ++i) {
    queued_audio_bytes_.fetch_sub(outgoing_[i].audio_bytes);
    outgoing_bytes_ -= outgoing_[i].bytes.size();
  }
  // The frames being written keep their buffers until OnWritten has run.
  outgoing_.erase(outgoing_.begin() + static_cast<std::ptrdiff_t>(writing_), outgoing_.end());
  held_.reset();
  if (handler_ != nullptr) handler_->OnConnectionEnded();
  spdlog::debug("Wyoming connection from {} ended", remote_);
}

}  // namespace voxserve::transport::wyoming
