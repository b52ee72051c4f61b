// The speech stream protocol of one WebSocket, without the socket: a config message, then text in
// pieces → whole sentences (text::TextAccumulator, the module the gRPC bidirectional call uses
// too) → one TtsService request per sentence, one after another, so sentence N's audio always
// precedes sentence N+1's → binary audio messages and JSON events through a StreamOutput.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/request_context.h"
#include "core/structured_log.h"
#include "service/tts_service.h"
#include "text/text_accumulator.h"
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

// Every method runs on the connection's strand (the sentence sinks post there). Owned by the
// connection, which outlives every sink call (a sink keeps the connection alive).
class SpeechStream {
 public:
  SpeechStream(service::TtsService& service, WebSocketMetrics& metrics, StreamOutput& output,
               std::weak_ptr<StreamOutput> keep_alive, StreamCaller caller);
  ~SpeechStream();

  void OnMessage(std::string_view message);
  void OnBinaryMessage();
  // An audio message reached the socket: a request paused for this client may go on.
  void OnAudioWritten();
  // A sentence is being synthesized or waits for its turn.
  bool Busy() const { return job_ != nullptr || !waiting_.empty(); }
  // Nothing to do for websocket.idle_timeout_ms: closes with 1008.
  void OnIdleTimeout();
  // Shutdown: the running sentence finishes, then the socket closes with 1001.
  void Drain();
  // The socket is gone: work still queued is cancelled; the log line follows its end.
  void OnConnectionEnded(ConnectionEnd end, std::optional<int> client_close_code);

  // From a sentence's sink (posted to the strand).
  struct SentenceResult {
    absl::Status status;
    service::SynthesisSummary summary;
    size_t audio_bytes = 0;
    int sample_rate = 0;
    std::optional<core::Clock::time_point> first_audio_at;
  };
  void OnSentenceComplete(SentenceResult result);

 private:
  enum class Phase { kAwaitingConfig, kOpen, kInputDone, kDraining, kClosing };
  struct Sentence {
    std::string text;
    core::Clock::time_point completed_at;  // its timeout and timings count from here
  };

  absl::Status Configure(std::string_view message);
  absl::Status TakeMessage(std::string_view message);
  absl::Status TakeSentences(absl::StatusOr<std::vector<std::string>> sentences);
  void StartNextSentence();
  void UpdateReading();
  void Fail(const absl::Status& status);
  void FinishDrain();
  void CloseWith(CloseCode code, std::string_view reason);
  void SendEvent(std::string json, std::string_view type);
  void WriteLogOnceEnded();

  service::TtsService& service_;
  WebSocketMetrics& metrics_;
  StreamOutput& output_;
  const std::weak_ptr<StreamOutput> keep_alive_;  // handed to sinks as a shared_ptr
  StreamCaller caller_;

  Phase phase_ = Phase::kAwaitingConfig;
  bool ended_ = false;  // the connection is gone
  bool logged_ = false;
  StreamConfig config_;
  std::optional<text::TextAccumulator> accumulator_;
  std::deque<Sentence> waiting_;
  std::shared_ptr<service::SynthesisJob> job_;  // the sentence being synthesized
  Sentence current_;
  int sentences_started_ = 0;

  service::SynthesisSummary totals_;  // for `done` and the log line
  std::optional<core::Clock::time_point> first_audio_at_;
  int log_status_ = 200;  // as HTTP would say it: 499 client left mid-work, 4xx/5xx errors
  std::optional<int> close_code_;  // sent by the server, or received from the client
};

}  // namespace voxserve::transport::websocket
