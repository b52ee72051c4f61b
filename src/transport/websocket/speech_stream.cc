#include "transport/websocket/speech_stream.h"

#include <algorithm>

#include "core/error.h"
#include "transport/http/error_response.h"

namespace voxserve::transport::websocket {
namespace {

// Complete sentences waiting for their turn before the connection stops reading: TCP flow
// control then holds the sender back (as the gRPC call does with HTTP/2's). Each is at most
// limits.max_segment_chars, so a few tens of KiB of text plus two messages at most (the one that
// went over, and one the connection reads and holds to see a close or reset).
constexpr size_t kMaxWaitingSentences = 16;

constexpr const char* kRoute = "/v1/audio/speech/stream";

double SecondsBetween(core::Clock::time_point from, core::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Owned by one sentence's job until OnComplete; calls arrive serialized on a service thread.
// Keeps the connection (and so the stream) alive until its completion has been handled.
class SentenceSink final : public service::SynthesisSink {
 public:
  SentenceSink(std::shared_ptr<StreamOutput> output, SpeechStream* stream)
      : output_(std::move(output)), stream_(stream) {}

  void OnStart(int output_sample_rate) override { result_.sample_rate = output_sample_rate; }
  void OnAudio(std::string bytes) override {
    if (!result_.first_audio_at) result_.first_audio_at = core::Clock::now();
    result_.audio_bytes += bytes.size();
    output_->PostAudio(std::move(bytes));
  }
  void OnComplete(const absl::Status& status, const service::SynthesisSummary& summary) override {
    result_.status = status;
    result_.summary = summary;
    // Posted after every PostAudio of this sentence: the event follows its audio.
    output_->Post([stream = stream_, result = std::move(result_)]() mutable {
      stream->OnSentenceComplete(std::move(result));
    });
  }
  size_t BufferedBytes() const override { return output_->QueuedAudioBytes(); }

 private:
  const std::shared_ptr<StreamOutput> output_;
  SpeechStream* const stream_;
  SpeechStream::SentenceResult result_;
};

}  // namespace

SpeechStream::SpeechStream(service::TtsService& service, WebSocketMetrics& metrics,
                           StreamOutput& output, std::weak_ptr<StreamOutput> keep_alive,
                           StreamCaller caller)
    : service_(service),
      metrics_(metrics),
      output_(output),
      keep_alive_(std::move(keep_alive)),
      caller_(std::move(caller)) {}

SpeechStream::~SpeechStream() {
  if (job_ != nullptr) job_->Cancel();
}

void SpeechStream::OnMessage(std::string_view message) {
  // After the server's close nothing more is taken; while draining, text can no longer be spoken.
  if (ended_ || phase_ == Phase::kClosing || phase_ == Phase::kDraining) return;
  absl::Status status =
      phase_ == Phase::kAwaitingConfig ? Configure(message) : TakeMessage(message);
  if (!status.ok()) return Fail(status);
  StartNextSentence();
  UpdateReading();
}

void SpeechStream::OnBinaryMessage() {
  metrics_.CountMessage("in", "binary");
  if (ended_ || phase_ == Phase::kClosing) return;
  metrics_.CountMessage("out", "error");
  output_.SendEvent(ErrorEvent(core::InvalidArgument(
      "messages must be JSON text; binary messages are not part of this protocol", {},
      "binary_message")));
  log_status_ = 400;
  CloseWith(CloseCode::kUnsupportedData, "binary messages are not accepted");
}

absl::Status SpeechStream::Configure(std::string_view message) {
  absl::StatusOr<StreamConfig> config = ParseConfigMessage(message);
  metrics_.CountMessage("in", config.ok() ? "config" : "invalid");
  if (!config.ok()) return config.status();
  const int max_timeout_ms = service_.config().max_timeout_ms;
  if (config->timeout && config->timeout->count() > max_timeout_ms) {
    return core::InvalidArgument(
        "timeout must be between 1 and " + std::to_string(max_timeout_ms) + " ms", "timeout_ms",
        "invalid_timeout");
  }
  absl::StatusOr<const text::SentenceSplitter*> splitter =
      service_.SplitterForVoice(config->model, config->voice, caller_.auth.allowed_models);
  if (!splitter.ok()) return splitter.status();
  config_ = *std::move(config);
  accumulator_.emplace(**splitter,
                       static_cast<size_t>(std::max(1, service_.config().max_segment_chars)));
  phase_ = Phase::kOpen;
  SendEvent(ReadyEvent(caller_.request_id, config_.format), "ready");
  return absl::OkStatus();
}

absl::Status SpeechStream::TakeMessage(std::string_view message) {
  absl::StatusOr<ClientMessage> parsed = ParseClientMessage(message);
  if (parsed.ok() && phase_ == Phase::kInputDone) {
    parsed = core::InvalidArgument("no message may follow {\"close\": true}", {},
                                   "message_after_close");
  }
  if (!parsed.ok()) {
    metrics_.CountMessage("in", "invalid");
    return parsed.status();
  }
  metrics_.CountMessage("in", parsed->close ? "close" : parsed->flush ? "flush" : "text");
  if (parsed->text) {
    if (absl::Status status = TakeSentences(accumulator_->Append(*parsed->text)); !status.ok()) {
      return status;
    }
  }
  if (parsed->flush || parsed->close) {
    if (absl::Status status = TakeSentences(accumulator_->Flush()); !status.ok()) return status;
  }
  if (parsed->close) phase_ = Phase::kInputDone;
  return absl::OkStatus();
}

absl::Status SpeechStream::TakeSentences(absl::StatusOr<std::vector<std::string>> sentences) {
  if (!sentences.ok()) return sentences.status();
  const core::Clock::time_point now = core::Clock::now();
  for (std::string& text : *sentences) waiting_.push_back({std::move(text), now});
  return absl::OkStatus();
}

void SpeechStream::StartNextSentence() {
  while (job_ == nullptr && !ended_ && phase_ != Phase::kClosing) {
    if (phase_ == Phase::kDraining) return FinishDrain();
    if (waiting_.empty()) {
      if (phase_ != Phase::kInputDone) return;
      service::SynthesisSummary done = totals_;
      if (first_audio_at_) {
        done.time_to_first_audio_seconds = SecondsBetween(caller_.started_at, *first_audio_at_);
      }
      done.total_seconds = SecondsBetween(caller_.started_at, core::Clock::now());
      SendEvent(DoneEvent(done), "done");
      return CloseWith(CloseCode::kNormal, "done");
    }
    Sentence sentence = std::move(waiting_.front());
    waiting_.pop_front();
    service::SynthesisRequest request;
    request.model = config_.model;
    request.voice = config_.voice;
    request.text = sentence.text;
    request.text_field = "text";
    request.speed = config_.speed;
    request.instructions = config_.instructions;
    request.format = config_.format;
    request.streaming = true;
    request.continues_stream = sentences_started_ > 0;
    request.timeout = config_.timeout;
    request.allowed_models = caller_.auth.allowed_models;
    request.context.request_id =
        caller_.request_id + "/" + std::to_string(sentences_started_);
    request.context.received_at = sentence.completed_at;
    auto job = service_.Synthesize(std::move(request),
                                   std::make_shared<SentenceSink>(keep_alive_.lock(), this));
    if (!job.ok()) {
      // A "sentence" of punctuation alone ("..."): nothing to speak, nothing wrong.
      if (core::DetailOf(job.status()).code == "empty_input") continue;
      return Fail(job.status());
    }
    job_ = *std::move(job);
    current_ = std::move(sentence);
    ++sentences_started_;
  }
}

void SpeechStream::OnSentenceComplete(SentenceResult result) {
  job_.reset();
  if (ended_) return WriteLogOnceEnded();
  if (phase_ == Phase::kClosing) return;  // cancelled by a failure already reported
  if (!result.status.ok()) return Fail(result.status);
  const service::SynthesisSummary& summary = result.summary;
  SendEvent(SegmentDoneEvent({sentences_started_ - 1, current_.text, result.audio_bytes,
                              result.sample_rate, summary}),
            "segment_done");
  totals_.AddSentence(summary);
  if (!first_audio_at_) first_audio_at_ = result.first_audio_at;
  StartNextSentence();
  UpdateReading();
}

void SpeechStream::OnAudioWritten() {
  if (job_ != nullptr) job_->Resume();  // cheap when it is not paused
}

void SpeechStream::OnIdleTimeout() {
  if (ended_ || phase_ == Phase::kClosing || Busy()) return;
  log_status_ = 408;
  CloseWith(CloseCode::kPolicy, "idle timeout: no message for too long");
}

void SpeechStream::Drain() {
  if (ended_ || phase_ == Phase::kClosing) return;
  phase_ = Phase::kDraining;
  if (job_ == nullptr) FinishDrain();
}

void SpeechStream::FinishDrain() {
  const bool unspoken =
      !waiting_.empty() || (accumulator_ && accumulator_->pending_bytes() > 0);
  if (unspoken) {
    log_status_ = 503;
    SendEvent(ErrorEvent(core::Draining(
                  "server is shutting down: text not yet spoken was dropped")),
              "error");
  }
  CloseWith(CloseCode::kGoingAway, "server is shutting down");
}

void SpeechStream::OnConnectionEnded(ConnectionEnd end, std::optional<int> client_close_code) {
  if (ended_) return;
  ended_ = true;
  if (phase_ != Phase::kClosing) {  // the client ended it
    const bool unfinished = Busy() || (accumulator_ && accumulator_->pending_bytes() > 0);
    if (end == ConnectionEnd::kHandshakeFailed) {
      log_status_ = 400;
    } else if (end == ConnectionEnd::kTooBig) {
      log_status_ = 413;
      close_code_ = static_cast<int>(CloseCode::kTooBig);
    } else {
      if (unfinished) log_status_ = 499;
      close_code_ = client_close_code;
    }
  }
  waiting_.clear();
  if (job_ != nullptr) job_->Cancel();  // its completion writes the log line
  WriteLogOnceEnded();
}

void SpeechStream::UpdateReading() {
  const bool open = !ended_ && phase_ != Phase::kClosing;
  output_.SetReading(open &&
                     (phase_ != Phase::kOpen || waiting_.size() < kMaxWaitingSentences));
}

void SpeechStream::Fail(const absl::Status& status) {
  if (ended_ || phase_ == Phase::kClosing) return;
  log_status_ = http::HttpStatusFor(status);
  SendEvent(ErrorEvent(status), "error");
  CloseWith(CloseCodeFor(status), std::string(status.message()));
}

void SpeechStream::CloseWith(CloseCode code, std::string_view reason) {
  phase_ = Phase::kClosing;
  close_code_ = static_cast<int>(code);
  waiting_.clear();
  if (job_ != nullptr && code != CloseCode::kNormal) job_->Cancel();
  output_.Close(code, std::string(reason));
}

void SpeechStream::SendEvent(std::string json, std::string_view type) {
  metrics_.CountMessage("out", type);
  output_.SendEvent(std::move(json));
}

void SpeechStream::WriteLogOnceEnded() {
  if (logged_ || !ended_ || job_ != nullptr) return;
  logged_ = true;
  caller_.admission.Reset();
  core::RequestLogEntry entry;
  entry.request_id = caller_.request_id;
  entry.transport = "websocket";
  entry.method = "GET";
  entry.route = kRoute;
  entry.status = log_status_;
  entry.key = caller_.auth.key_name;
  entry.client_subject = caller_.auth.client_subject;
  entry.remote = caller_.remote;
  entry.close_code = close_code_;
  if (sentences_started_ > 0) {
    entry.model = totals_.model;
    entry.voice = totals_.voice;
    entry.chars = totals_.input_chars;
    entry.audio_seconds = totals_.audio_seconds;
    entry.queue_wait_seconds = totals_.queue_wait_seconds;
    if (first_audio_at_) {
      entry.time_to_first_audio_seconds = SecondsBetween(caller_.started_at, *first_audio_at_);
    }
  }
  entry.total_seconds = SecondsBetween(caller_.started_at, core::Clock::now());
  core::LogRequest(entry);
}

}  // namespace voxserve::transport::websocket
