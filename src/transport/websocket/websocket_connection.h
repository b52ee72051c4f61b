// One upgraded connection: the WebSocket handshake, the read loop (paused while the client is
// ahead of synthesis), one write at a time from an ordered queue, keep-alive pings, idle and
// write timeouts, the close handshake. Its StreamProtocol (chosen by path) speaks the protocol.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include "service/tts_service.h"
#include "transport/http/http_metrics.h"
#include "transport/http/websocket_upgrade.h"
#include "transport/websocket/stream_protocol.h"
#include "transport/websocket/stream_output.h"
#include "transport/websocket/websocket_config.h"
#include "transport/websocket/websocket_metrics.h"
#include "transport/websocket/websocket_stream.h"

namespace voxserve::transport::websocket {

// What every connection of one endpoint shares; owned by the endpoint, which outlives them.
struct ConnectionEnv {
  service::TtsService& service;
  WebSocketMetrics& metrics;
  http::HttpMetrics& http_metrics;
  WebSocketConfig config;
  int handshake_timeout_ms = 10'000;  // the 101 and the close handshake (http.header_timeout_ms)
  int write_timeout_ms = 30'000;      // a client that accepts no bytes this long is cut off
  std::function<void()> on_destroyed;  // from the destructor, on any thread
};

// Owned by shared_ptrs held by its pending I/O handlers, by tasks posted to it and by the sinks
// of its running sentence. Everything runs on the socket's strand, except the calls marked safe
// cross thread (StreamOutput's PostAudio, Post, QueuedAudioBytes; Drain, Shutdown).
class WebSocketConnection final : public StreamOutput,
                                  public std::enable_shared_from_this<WebSocketConnection> {
 public:
  // `protocol` is one of the endpoint's, which outlive the connection.
  WebSocketConnection(http::UpgradeRequest request, ConnectionEnv& env,
                      const ProtocolRoute& protocol);
  ~WebSocketConnection() override;

  void Start();     // on the strand: the handshake, then the protocol
  void Drain();     // safe cross thread
  void Shutdown();  // safe cross thread: cut off now, work cancelled

  // StreamOutput.
  void SendEvent(std::string json) override;
  void SendAudioEvent(std::string json) override;
  void PostAudio(std::string bytes) override;
  void Post(absl::AnyInvocable<void() &&> task) override;
  size_t QueuedAudioBytes() const override { return queued_audio_bytes_.load(); }
  void SetReading(bool reading) override;
  void Close(CloseCode code, std::string reason) override;

 private:
  struct Frame {
    std::string bytes;
    bool binary = false;
    bool audio = false;  // binary audio, or JSON carrying it; counted in queued_audio_bytes_
  };
  struct Message {
    std::string bytes;
    bool binary = false;
  };

  void OnAccepted(boost::system::error_code ec);
  void ReadNext();
  void OnRead(boost::system::error_code ec);
  void Deliver(Message message);
  void DeliverHeld();
  void QueueAudio(std::string bytes);
  void Enqueue(Frame frame);
  void WriteNext();
  void OnWritten(boost::system::error_code ec);
  void StartClose();
  void SetKeepAlive(bool on);
  void ArmIdleTimer();
  void OnIdleTimer();
  void Abort();
  // aborted: the server cut the connection (dead peer, write timeout, shutdown).
  void End(ConnectionEnd end, std::optional<int> client_close_code, bool aborted = false);

  ConnectionEnv& env_;
  const ProtocolRoute& protocol_;
  http::UpgradeRequest upgrade_;  // its stream moves into ws_; the rest goes to stream_ in Start
  WebSocketStream ws_;
  boost::asio::any_io_executor executor_;  // the socket's strand
  boost::asio::steady_timer idle_timer_;
  boost::asio::steady_timer write_timer_;
  std::unique_ptr<StreamProtocol> stream_;  // made in Start (it needs weak_from_this)

  boost::beast::flat_buffer read_buffer_;
  bool open_ = false;             // handshake done
  bool drain_requested_ = false;  // Drain came before the handshake was done
  bool reading_ = false;          // a read is pending
  bool reading_wanted_ = true;
  // Read while the stream did not want it: delivered once it does. While it is here no read is
  // pending (TCP holds the client back); until then a read is, so a close or reset is seen.
  std::optional<Message> held_;
  bool keep_alive_on_ = true;
  std::deque<Frame> outgoing_;    // front is being written while writing_
  bool writing_ = false;
  std::optional<std::pair<CloseCode, std::string>> close_;  // requested; sent after the queue
  bool close_started_ = false;
  bool ended_ = false;
  std::atomic<size_t> queued_audio_bytes_{0};
};

}  // namespace voxserve::transport::websocket
