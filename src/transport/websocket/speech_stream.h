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
#include "transport/websocket/stream_protocol.h"
#include "transport/websocket/websocket_messages.h"
#include "transport/websocket/websocket_metrics.h"

namespace voxserve::transport::websocket {

// Every method runs on the connection's strand, and so do the session's serialized events (its
// completions are posted there); OnAudio and QueuedAudioBytes come from service threads. Owned by
// the connection, which outlives every sentence's sink (a sink keeps the connection alive).
class SpeechStream final : public StreamProtocol, private service::SpeechSession::Listener {
 public:
  SpeechStream(service::TtsService& service, WebSocketMetrics& metrics, StreamOutput& output,
               std::weak_ptr<StreamOutput> keep_alive, StreamCaller caller);
  ~SpeechStream() override;

  void OnMessage(std::string_view message) override;
  void OnBinaryMessage() override;
  // An audio message reached the socket: a request paused for this client may go on.
  void OnAudioWritten() override;
  // A sentence is being synthesized or waits for its turn.
  bool Busy() const override { return session_ != nullptr && session_->Busy(); }
  // Nothing to do for websocket.idle_timeout_ms: closes with 1008.
  void OnIdleTimeout() override;
  // Shutdown: the running sentence finishes, then the socket closes with 1001.
  void Drain() override;
  // The socket is gone: work still queued is cancelled; the log line follows its end.
  void OnConnectionEnded(ConnectionEnd end, std::optional<int> client_close_code) override;

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
