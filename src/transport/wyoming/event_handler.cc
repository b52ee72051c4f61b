#include "transport/wyoming/event_handler.h"

#include "absl/strings/ascii.h"
#include "audio/audio_format.h"
#include "core/error.h"
#include "core/request_id.h"
#include "core/structured_log.h"
#include "transport/http/error_response.h"
#include "transport/wyoming/wyoming_events.h"
#include "transport/wyoming/wyoming_voices.h"

namespace voxserve::transport::wyoming {
namespace {

// Samples per audio-chunk event: wyoming-piper's --samples-per-chunk default (46 ms at 22 kHz),
// the size Wyoming clients are used to.
constexpr size_t kChunkSamples = 1024;
constexpr size_t kChunkBytes = kChunkSamples * kSampleWidthBytes;

double SecondsBetween(core::Clock::time_point from, core::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string_view InboundType(std::string_view type) {
  for (std::string_view known :
       {kDescribe, kSynthesize, kSynthesizeStart, kSynthesizeChunk, kSynthesizeStop, kPing}) {
    if (type == known) return known;
  }
  return "other";
}

// The parts of a synthesis request every Wyoming request shares: raw 16-bit PCM at the voice's
// own rate (audio-start says which), delivered as each sentence is made.
service::SynthesisRequest BaseRequest(const std::string& id, core::Clock::time_point received) {
  service::SynthesisRequest request;
  request.text_field = "text";
  request.format = audio::AudioFormat::kPcm;
  request.sample_rate = audio::kVoiceSampleRate;
  request.streaming = true;
  request.context.request_id = id;
  request.context.received_at = received;
  return request;
}

}  // namespace

std::string ErrorCodeFor(const absl::Status& status) {
  std::string code = core::DetailOf(status).code;
  if (!code.empty()) return code;
  return absl::AsciiStrToLower(absl::StatusCodeToString(status.code()));
}

// Owned by the job until OnComplete; its calls arrive serialized on a service thread. It keeps
// the connection (and with it the handler) alive.
class EventHandler::OneShotSink final : public service::SynthesisSink {
 public:
  OneShotSink(EventHandler* handler, std::shared_ptr<EventOutput> output)
      : handler_(handler), output_(std::move(output)) {}

  void OnStart(int output_sample_rate) override { sample_rate_ = output_sample_rate; }
  void OnAudio(std::string bytes) override { handler_->PostAudio(std::move(bytes), sample_rate_); }
  void OnComplete(const absl::Status& status, const service::SynthesisSummary& summary) override {
    // After every OnAudio's post: the end follows the audio on the strand.
    output_->Post([handler = handler_, output = output_, status, summary] {
      handler->OnSynthesisDone(status, summary);
    });
  }
  size_t BufferedBytes() const override { return output_->QueuedAudioBytes(); }

 private:
  EventHandler* const handler_;
  const std::shared_ptr<EventOutput> output_;
  int sample_rate_ = 0;
};

EventHandler::EventHandler(HandlerEnv& env, EventOutput& output,
                           std::weak_ptr<EventOutput> keep_alive, std::string remote)
    : env_(env), output_(output), keep_alive_(std::move(keep_alive)), remote_(std::move(remote)) {}

EventHandler::~EventHandler() {
  if (job_ != nullptr) job_->Cancel();
  // session_'s destructor cancels its running sentence.
}

void EventHandler::OnEvent(Event event) {
  ended_session_.reset();
  env_.metrics.CountEvent("in", InboundType(event.type));
  if (closing_ || ended_) return;
  const std::string& type = event.type;
  if (draining_) {
    // A request under way ends as the drain decides; anything new is refused.
    if (!request_) Fail(core::Draining("server is shutting down"));
    return;
  }
  if (job_ != nullptr) {  // reading is paused while a synthesize runs: not reached
    return Fail(core::InvalidArgument("an event arrived while a synthesize was running", "type",
                                      "invalid_event"));
  }
  if (type == kDescribe) {
    Describe();
  } else if (type == kPing) {
    Send(PongFrame(ParsePing(event.data)), kPong);
  } else if (type == kSynthesize) {
    // Inside a stream it is Home Assistant's copy of the stream's text for servers that do not
    // stream (wyoming-piper ignores it too).
    if (session_ == nullptr) Synthesize(event);
  } else if (type == kSynthesizeStart) {
    StartStream(event);
  } else if (type == kSynthesizeChunk) {
    TakeChunk(event);
  } else if (type == kSynthesizeStop) {
    StopStream();
  }
  // Other events (a newer client's, or another service's) are ignored, as the reference does.
  UpdateReading();
}

void EventHandler::OnBadFrame(const absl::Status& status) {
  env_.metrics.CountEvent("in", "invalid");
  Fail(core::InvalidArgument(std::string(status.message()), {}, "bad_frame"));
}

void EventHandler::Describe() {
  Send(InfoFrame(InfoData(WyomingVoices(env_.service.ListVoices()), env_.version)), kInfo);
}

void EventHandler::Synthesize(const Event& event) {
  request_.emplace(Request{"synthesize", core::NewRequestId(), core::Clock::now()});
  absl::StatusOr<SynthesizeEvent> parsed = ParseSynthesize(event.data);
  if (!parsed.ok()) return Fail(env_.service.RejectUnparsed(parsed.status()));
  absl::StatusOr<VoiceChoice> choice =
      ChooseVoice(WyomingVoices(env_.service.ListVoices()), parsed->voice);
  if (!choice.ok()) return Fail(env_.service.RejectUnparsed(choice.status()));
  service::SynthesisRequest request = BaseRequest(request_->id, request_->started_at);
  request.model = std::move(choice->model);
  request.voice = std::move(choice->voice);
  request.text = std::move(parsed->text);
  auto sink = std::make_shared<OneShotSink>(this, keep_alive_.lock());
  absl::StatusOr<std::shared_ptr<service::SynthesisJob>> job =
      env_.service.Synthesize(std::move(request), std::move(sink));
  if (!job.ok()) return Fail(job.status());
  job_ = *std::move(job);
}

void EventHandler::OnSynthesisDone(const absl::Status& status,
                                   const service::SynthesisSummary& summary) {
  job_.reset();
  if (!request_) return;  // ended already (Fail)
  if (ended_) return Finish(status, summary);
  if (!status.ok()) return Fail(status, summary);
  if (!audio_open_) EmitAudio({}, summary.output_sample_rate);  // audio-start of no audio
  StopAudio();
  Finish(status, summary);
  if (draining_) CloseWhenIdle();
  UpdateReading();
}

void EventHandler::StartStream(const Event& event) {
  if (session_ != nullptr) {
    return Fail(
        core::InvalidArgument("synthesize-start while a stream is open", "type", "invalid_event"));
  }
  request_.emplace(Request{"stream", core::NewRequestId(), core::Clock::now()});
  absl::StatusOr<VoiceRequest> voice = ParseSynthesizeStart(event.data);
  if (!voice.ok()) return Fail(env_.service.RejectUnparsed(voice.status()));
  absl::StatusOr<VoiceChoice> choice =
      ChooseVoice(WyomingVoices(env_.service.ListVoices()), *voice);
  if (!choice.ok()) return Fail(env_.service.RejectUnparsed(choice.status()));
  service::SessionOptions options;
  options.request = BaseRequest(request_->id, request_->started_at);
  options.request.model = std::move(choice->model);
  options.request.voice = std::move(choice->voice);
  options.started_at = request_->started_at;
  // Completions run on the strand; UpdateReading after each, as a sentence may have started.
  service::SessionPost post = [output = &output_, handler = this](auto task) {
    output->Post([handler, task = std::move(task)]() mutable {
      std::move(task)();
      handler->UpdateReading();
    });
  };
  absl::StatusOr<std::unique_ptr<service::SpeechSession>> session = service::SpeechSession::Create(
      env_.service, std::move(options), *this, std::move(post), keep_alive_);
  if (!session.ok()) return Fail(session.status());
  session_ = *std::move(session);
  stop_received_ = false;
}

void EventHandler::TakeChunk(const Event& event) {
  if (session_ == nullptr || stop_received_) {
    return Fail(core::InvalidArgument(
        "synthesize-chunk outside a stream: send synthesize-start first", "type", "invalid_event"));
  }
  absl::StatusOr<std::string> text = ParseSynthesizeChunk(event.data);
  if (!text.ok()) return Fail(text.status());
  if (absl::Status status = session_->AddText(*text); !status.ok()) return Fail(status);
}

void EventHandler::StopStream() {
  if (session_ == nullptr || stop_received_) {
    return Fail(core::InvalidArgument("synthesize-stop outside a stream", "type", "invalid_event"));
  }
  stop_received_ = true;
  // The rest is spoken; OnEnd follows the last sentence (at once when nothing is left).
  if (absl::Status status = session_->End(); !status.ok()) Fail(status);
}

void EventHandler::OnAudio(std::string bytes, int sample_rate) {
  PostAudio(std::move(bytes), sample_rate);
}

size_t EventHandler::QueuedAudioBytes() const { return output_.QueuedAudioBytes(); }

void EventHandler::OnSentenceDone(const service::SentenceReport& /*report*/) { StopAudio(); }

void EventHandler::OnEnd(const service::SessionEnd& end) {
  // Called from inside the session: it is destroyed later, at the next event.
  ended_session_ = std::move(session_);
  if (!request_) return;  // ended already (Fail)
  if (ended_) return Finish(end.status, end.totals);
  if (end.status.ok()) {
    StopAudio();
    Send(SynthesizeStoppedFrame(), kSynthesizeStopped);
    Finish(end.status, end.totals);
    if (draining_) CloseWhenIdle();
    return;
  }
  if (core::DetailOf(end.status).reason == core::ErrorReason::kDraining && draining_) {
    return Fail(core::Draining("server is shutting down: the stream ended before its text did"),
                end.totals);
  }
  Fail(end.status, end.totals);
}

void EventHandler::PostAudio(std::string pcm, int sample_rate) {
  if (pcm.empty()) return;
  output_.AddQueuedAudio(pcm.size());
  output_.Post([this, pcm = std::move(pcm), sample_rate] {
    if (closing_ || ended_) return output_.DropQueuedAudio(pcm.size());
    EmitAudio(pcm, sample_rate);
  });
}

void EventHandler::EmitAudio(const std::string& pcm, int sample_rate) {
  if (!audio_open_) {
    audio_open_ = true;
    audio_rate_ = sample_rate;
    audio_samples_ = 0;
    Send(AudioStartFrame(sample_rate, 0), kAudioStart);
  }
  for (size_t at = 0; at < pcm.size(); at += kChunkBytes) {
    std::string_view piece = std::string_view(pcm).substr(at, kChunkBytes);
    const auto timestamp_ms =
        audio_rate_ > 0 ? static_cast<int64_t>(audio_samples_ * 1000 / audio_rate_) : 0;
    env_.metrics.CountEvent("out", kAudioChunk);
    output_.Send(AudioChunkFrame(audio_rate_, piece, timestamp_ms), piece.size());
    audio_samples_ += piece.size() / kSampleWidthBytes;
  }
}

void EventHandler::StopAudio() {
  if (!audio_open_) return;
  audio_open_ = false;
  Send(AudioStopFrame(audio_rate_ > 0 ? static_cast<int64_t>(audio_samples_ * 1000 / audio_rate_)
                                      : 0),
       kAudioStop);
}

void EventHandler::Send(std::string frame, std::string_view type) {
  if (closing_ || ended_) return;
  env_.metrics.CountEvent("out", type);
  output_.Send(std::move(frame));
}

void EventHandler::Fail(const absl::Status& status, const service::SynthesisSummary& totals) {
  if (closing_ || ended_) return;
  if (request_) Finish(status, totals);
  Send(ErrorFrame(std::string(status.message()), ErrorCodeFor(status)), kError);
  CloseWhenIdle();
  // Nothing more is spoken. The completions that follow find no request and end quietly.
  if (job_ != nullptr) job_->Cancel();
  if (session_ != nullptr) session_->Abort(absl::CancelledError("the connection is closing"));
}

void EventHandler::Finish(const absl::Status& status, const service::SynthesisSummary& totals) {
  if (!request_) return;
  const Request request = *std::move(request_);
  request_.reset();
  env_.metrics.CountRequest(request.kind, status);
  core::RequestLogEntry entry;
  entry.request_id = request.id;
  entry.transport = "wyoming";
  entry.method =
      request.kind == "stream" ? std::string(kSynthesizeStart) : std::string(kSynthesize);
  entry.route = "wyoming";
  entry.status = status.ok() ? 200 : http::HttpStatusFor(status);
  entry.remote = remote_;
  if (totals.segments > 0) totals.AddToLog(entry);
  entry.total_seconds = SecondsBetween(request.started_at, core::Clock::now());
  core::LogRequest(entry);
}

void EventHandler::CloseWhenIdle() {
  closing_ = true;
  output_.Close();
}

void EventHandler::UpdateReading() {
  const bool waiting =
      job_ != nullptr || (session_ != nullptr && (stop_received_ || session_->Backlogged()));
  output_.SetReading(!closing_ && !ended_ && !waiting);
}

void EventHandler::OnAudioWritten() {
  if (job_ != nullptr) job_->Resume();
  if (session_ != nullptr) session_->ResumeAudio();
}

bool EventHandler::Busy() const {
  return job_ != nullptr || (session_ != nullptr && session_->Busy());
}

void EventHandler::OnIdleTimeout() {
  if (closing_ || ended_ || Busy()) return;
  Fail(core::InvalidArgument("idle timeout: no event for too long", {}, "idle_timeout"));
}

void EventHandler::Drain() {
  if (draining_ || closing_ || ended_) return;
  draining_ = true;
  if (session_ != nullptr) return session_->Drain();  // OnEnd ends it
  if (job_ == nullptr) CloseWhenIdle();  // else OnSynthesisDone closes after audio-stop
}

void EventHandler::OnConnectionEnded() {
  if (ended_) return;
  ended_ = true;
  // The completions that follow log the request (cancelled: 499).
  if (job_ != nullptr) job_->Cancel();
  if (session_ != nullptr) session_->Abort(absl::CancelledError("the client went away"));
}

}  // namespace voxserve::transport::wyoming
