// The speech stream protocol of one WebSocket, without the socket: a thin adapter that turns
// JSON messages (a config, then text, flush and close) into calls on a service::SpeechSession,
// which does the work (sentences, their order, the waiting queue, totals), and the session's
// events into binary audio messages and JSON events through a StreamOutput.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/request_context.h"
#include "core/structured_log.h"
#include "service/speech_session.h"
#include "service/tts_service.h"
#include "transport/auth/authenticator.h"
#include "transport/auth/key_limiter.h"
#include "transport/websocket/stream_output.h"
#include "transport/websocket/websocket_messages.h"
#include "transport/websocket/websocket_metrics.h"

namespace voxserve::transport::websocket {

// Who is on the other end; from the upgrade request.
struct StreamCaller {
  std::string request_id;     // each sentence's request is "<request_id>/<index>"
  auth::AuthResult auth;      // allowed models; key name and subject for the log
  auth::Admission admission;  // the key's concurrency slot, released with the stream
  std::string remote;
  core::Clock::time_point started_at;  // the upgrade request's arrival: `done` timings count from it
};

// How the connection ended, as the connection saw it.
enum class ConnectionEnd {
  kClosed,     // the close handshake the server started has completed (or failed)
  kByClient,   // the client closed, or went away (reset, EOF, no pong)
  kTooBig,     // the client sent a message over the limit; Beast closed with 1009
  kHandshakeFailed,  // a malformed upgrade request (Beast answered 400)
};

// Every method runs on the connection's strand, and so do the session's serialized events (its
// completions are posted there); OnAudio and QueuedAudioBytes come from service threads. Owned by
// the connection, which outlives every sentence's sink (a sink keeps the connection alive).
class SpeechStream final : private service::SpeechSession::Listener {
 public:
  SpeechStream(service::TtsService& service, WebSocketMetrics& metrics, StreamOutput& output,
               std::weak_ptr<StreamOutput> keep_alive, StreamCaller caller);
  ~SpeechStream() override;

  void OnMessage(std::string_view message);
  void OnBinaryMessage();
  // An audio message reached the socket: a request paused for this client may go on.
  void OnAudioWritten();
  // A sentence is being synthesized or waits for its turn.
  bool Busy() const { return session_ != nullptr && session_->Busy(); }
  // Nothing to do for websocket.idle_timeout_ms: closes with 1008.
  void OnIdleTimeout();
  // Shutdown: the running sentence finishes, then the socket closes with 1001.
  void Drain();
  // The socket is gone: work still queued is cancelled; the log line follows its end.
  void OnConnectionEnded(ConnectionEnd end, std::optional<int> client_close_code);

 private:
  absl::Status Configure(std::string_view message);
  absl::Status TakeMessage(std::string_view message);
  void UpdateReading();
  void Fail(const absl::Status& status);
  void CloseWith(CloseCode code, std::string_view reason);
  void SendEvent(std::string json, std::string_view type);
  void WriteLogOnceEnded();

  // service::SpeechSession::Listener
  void OnAudio(std::string bytes, int sample_rate) override;
  size_t QueuedAudioBytes() const override;
  void OnSentenceDone(const service::SentenceReport& report) override;
  void OnEnd(const service::SessionEnd& end) override;

  service::TtsService& service_;
  WebSocketMetrics& metrics_;
  StreamOutput& output_;
  const std::weak_ptr<StreamOutput> keep_alive_;  // handed to sentence sinks as a shared_ptr
  StreamCaller caller_;

  std::unique_ptr<service::SpeechSession> session_;  // from the config message on
  http::TimestampsMode timestamps_ = http::TimestampsMode::kNone;  // from the config message
  bool input_closed_ = false;  // {"close": true} was taken
  bool draining_ = false;
  bool closing_ = false;  // the server has started the close
  bool ended_ = false;    // the connection is gone
  bool logged_ = false;
  int log_status_ = 200;  // as HTTP would say it: 499 client left mid-work, 4xx/5xx errors
  std::optional<int> close_code_;  // sent by the server, or received from the client
};

}  // namespace voxserve::transport::websocket
