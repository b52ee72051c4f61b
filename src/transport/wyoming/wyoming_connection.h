// One Wyoming TCP connection: reads bytes into a FrameParser and hands each event to its
// EventHandler (holding the next one back while the handler is busy), writes the handler's
// events in order from a queue, idle and write timeouts, and a close that lets the last bytes
// arrive (shutdown, then a short wait for the client's EOF).
#pragma once

#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "transport/wyoming/event_handler.h"
#include "transport/wyoming/event_output.h"
#include "transport/wyoming/wyoming_frame.h"

namespace voxserve::transport::wyoming {

// What every connection of one server shares; owned by the server, which outlives them.
struct ConnectionEnv {
  HandlerEnv& handler;
  WyomingMetrics& metrics;
  int idle_timeout_ms = 300'000;       // wyoming.idle_timeout_ms
  int write_timeout_ms = 30'000;       // a client that accepts no bytes this long is cut off
  std::function<void()> on_destroyed;  // from the destructor, on any thread
};

// Owned by shared_ptrs held by its pending I/O handlers, by tasks posted to it and by the sinks
// of its running work. Everything runs on the socket's strand, except the calls marked safe
// cross thread (EventOutput's AddQueuedAudio, QueuedAudioBytes, Post; Start, Drain, Shutdown).
class WyomingConnection final : public EventOutput,
                                public std::enable_shared_from_this<WyomingConnection> {
 public:
  // `socket`'s executor is the connection's strand.
  WyomingConnection(boost::asio::ip::tcp::socket socket, std::string remote, ConnectionEnv& env);
  ~WyomingConnection() override;

  void Start();     // safe cross thread
  void Drain();     // safe cross thread: running work finishes, then the connection closes
  void Shutdown();  // safe cross thread: cut off now, work cancelled

  // EventOutput.
  void Send(std::string frame, size_t audio_bytes = 0) override;
  void AddQueuedAudio(size_t bytes) override { queued_audio_bytes_.fetch_add(bytes); }
  void DropQueuedAudio(size_t bytes) override { queued_audio_bytes_.fetch_sub(bytes); }
  size_t QueuedAudioBytes() const override { return queued_audio_bytes_.load(); }
  void Post(absl::AnyInvocable<void() &&> task) override;
  void SetReading(bool reading) override;
  void Close() override;

 private:
  struct Frame {
    std::string bytes;
    size_t audio_bytes = 0;
  };

  // More than kMaxOutgoingBytes waits to be written: no event is taken and nothing is read until
  // the client has read enough (issue 39: a client that sent describes and read nothing grew the
  // server by 23 MB/s).
  bool Backlogged() const;
  void ReadNext();
  void OnRead(boost::system::error_code ec, size_t bytes);
  void Pump();
  void WriteNext();
  void OnWritten(boost::system::error_code ec);
  void Linger();
  void ArmIdleTimer();
  void OnIdleTimer();
  void End();

  ConnectionEnv& env_;
  boost::asio::ip::tcp::socket socket_;
  const std::string remote_;
  boost::asio::steady_timer idle_timer_;  // also the linger's bound
  boost::asio::steady_timer write_timer_;
  std::unique_ptr<EventHandler> handler_;  // made in Start (it needs weak_from_this)

  FrameParser parser_;
  std::array<char, 16 << 10> read_buffer_{};
  std::optional<Event> held_;  // parsed while the handler did not want it; no read while held
  bool reading_ = false;       // a read is pending
  bool reading_wanted_ = true;
  bool pumping_ = false;

  std::deque<Frame> outgoing_;
  size_t outgoing_bytes_ = 0;  // the bytes of the frames in outgoing_
  size_t writing_ = 0;         // frames at the front of outgoing_ being written
  bool close_requested_ = false;
  bool lingering_ = false;  // our side is shut down; waiting for the client's EOF
  bool ended_ = false;
  std::atomic<size_t> queued_audio_bytes_{0};
};

}  // namespace voxserve::transport::wyoming
