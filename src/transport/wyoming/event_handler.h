// The Wyoming TTS protocol of one connection, without the socket: a thin adapter that turns the
// client's events into service calls and the service's audio into events.
//   describe                    → info (every voice: wyoming_voices.h)
//   synthesize                  → audio-start, audio-chunk as each sentence is made, audio-stop
//                                 (TtsService::Synthesize, as REST's streaming responses)
//   synthesize-start, -chunk…,  → per sentence, as soon as it is complete: audio-start,
//   synthesize-stop               audio-chunk…, audio-stop; then synthesize-stopped
//                                 (service::SpeechSession, as the WebSocket and gRPC streams)
//   ping                        → pong
// A `synthesize` inside a stream is the copy of its text Home Assistant sends for servers that
// do not stream; it is ignored. An error ends the request with an `error` event {text, code},
// then the connection closes, as the reference server does (its handler raises).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "core/request_context.h"
#include "service/speech_session.h"
#include "service/tts_service.h"
#include "transport/wyoming/event_output.h"
#include "transport/wyoming/wyoming_frame.h"
#include "transport/wyoming/wyoming_metrics.h"

namespace voxserve::transport::wyoming {

// What every connection's handler shares; owned by the server, which outlives them.
struct HandlerEnv {
  service::TtsService& service;
  WyomingMetrics& metrics;
  std::string version;  // voxserve's, for info
};

// The Wyoming error code for a status: its detail code (voice_not_found, empty_input,
// queue_full, ...) or the status code in lower case.
std::string ErrorCodeFor(const absl::Status& status);

// Every method runs on the connection's strand, and so do the service's completions (posted
// there); the sinks' audio callbacks come from service threads and post to the strand. Owned by
// the connection, which the running work keeps alive (its sinks hold `keep_alive`).
class EventHandler final : private service::SpeechSession::Listener {
 public:
  EventHandler(HandlerEnv& env, EventOutput& output, std::weak_ptr<EventOutput> keep_alive,
               std::string remote);
  ~EventHandler() override;  // cancels work still running

  void OnEvent(Event event);
  // A malformed frame: an error event, then the connection closes.
  void OnBadFrame(const absl::Status& status);
  // Audio reached the socket: work paused for this client may go on.
  void OnAudioWritten();
  // Audio is being made for this client: the connection is not idle.
  bool Busy() const;
  void OnIdleTimeout();
  // Shutdown: running work finishes (a stream's running sentence), then the connection closes.
  void Drain();
  // The client has gone (EOF, reset, a failed write): its work is cancelled.
  void OnConnectionEnded();

 private:
  class OneShotSink;
  struct Request {
    std::string kind;  // "synthesize" or "stream", the metrics' label
    std::string id;
    core::Clock::time_point started_at;
  };

  void Describe();
  void Synthesize(const Event& event);
  void StartStream(const Event& event);
  void TakeChunk(const Event& event);
  void StopStream();
  void OnSynthesisDone(const absl::Status& status, const service::SynthesisSummary& summary);

  // service::SpeechSession::Listener
  void OnAudio(std::string bytes, int sample_rate) override;
  size_t QueuedAudioBytes() const override;
  void OnSentenceDone(const service::SentenceReport& report) override;
  void OnEnd(const service::SessionEnd& end) override;

  // Audio of the current request (service thread → strand).
  void PostAudio(std::string pcm, int sample_rate);
  void EmitAudio(const std::string& pcm, int sample_rate);
  void StopAudio();
  void Send(std::string frame, std::string_view type);
  // Ends the request under way (or refuses the event) with an error event; work still running
  // is cancelled and the connection closes.
  void Fail(const absl::Status& status, const service::SynthesisSummary& totals = {});
  void Finish(const absl::Status& status, const service::SynthesisSummary& totals);
  void CloseWhenIdle();
  void UpdateReading();

  HandlerEnv& env_;
  EventOutput& output_;
  const std::weak_ptr<EventOutput> keep_alive_;
  const std::string remote_;

  std::optional<Request> request_;                   // the request under way
  std::shared_ptr<service::SynthesisJob> job_;       // a synthesize's, until it completes
  std::unique_ptr<service::SpeechSession> session_;  // a stream's, until it ends
  // A session that has ended, destroyed at the next event (not inside its own callback).
  std::unique_ptr<service::SpeechSession> ended_session_;
  bool stop_received_ = false;  // synthesize-stop of the open stream

  // The audio stream being sent (audio-start sent, audio-stop not yet).
  bool audio_open_ = false;
  int audio_rate_ = 0;
  uint64_t audio_samples_ = 0;  // sent since audio-start, for the chunks' timestamps

  bool draining_ = false;
  bool closing_ = false;  // the connection closes once its queue is written
  bool ended_ = false;    // the client has gone
};

}  // namespace voxserve::transport::wyoming
