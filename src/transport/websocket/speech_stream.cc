#include "transport/websocket/speech_stream.h"

#include "core/error.h"
#include "transport/http/error_response.h"

namespace voxserve::transport::websocket {
namespace {

constexpr const char* kRoute = "/v1/audio/speech/stream";

double SecondsBetween(core::Clock::time_point from, core::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

}  // namespace

SpeechStream::SpeechStream(service::TtsService& service, WebSocketMetrics& metrics,
                           StreamOutput& output, std::weak_ptr<StreamOutput> keep_alive,
                           StreamCaller caller)
    : service_(service),
      metrics_(metrics),
      output_(output),
      keep_alive_(std::move(keep_alive)),
      caller_(std::move(caller)) {}

SpeechStream::~SpeechStream() = default;  // the session cancels a running sentence

void SpeechStream::OnMessage(std::string_view message) {
  // After the server's close nothing more is taken; while draining, text can no longer be spoken.
  if (ended_ || closing_ || draining_) return;
  absl::Status status = session_ == nullptr ? Configure(message) : TakeMessage(message);
  if (!status.ok()) return Fail(status);
  UpdateReading();
}

void SpeechStream::OnBinaryMessage() {
  metrics_.CountMessage("in", "binary");
  if (ended_ || closing_) return;
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
  if (!config.ok()) return service_.RejectUnparsed(config.status());
  service::SessionOptions options;
  options.request.model = std::move(config->model);
  options.request.voice = std::move(config->voice);
  options.request.format = config->format;
  options.request.speed = config->speed;
  options.request.instructions = std::move(config->instructions);
  options.request.voice_mode = std::move(config->voice_mode);
  options.request.input_format = std::move(config->input_format);
  options.request.dictionaries = std::move(config->dictionaries);
  options.request.seed = config->seed;
  options.request.timeout = config->timeout;
  options.request.cache_policy = config->cache_policy;
  options.request.normalize_text = config->normalize_text;
  timestamps_ = config->timestamps;
  options.request.allowed_models = caller_.auth.allowed_models;
  options.request.context.request_id = caller_.request_id;
  options.started_at = caller_.started_at;
  // Completions run on the strand; UpdateReading after each, as a sentence may have started.
  service::SessionPost post = [output = &output_, stream = this](auto task) {
    output->Post([stream, task = std::move(task)]() mutable {
      std::move(task)();
      stream->UpdateReading();
    });
  };
  absl::StatusOr<std::unique_ptr<service::SpeechSession>> session = service::SpeechSession::Create(
      service_, std::move(options), *this, std::move(post), keep_alive_);
  if (!session.ok()) return session.status();
  session_ = *std::move(session);
  SendEvent(ReadyEvent(caller_.request_id, config->format), "ready");
  return absl::OkStatus();
}

absl::Status SpeechStream::TakeMessage(std::string_view message) {
  absl::StatusOr<ClientMessage> parsed = ParseClientMessage(message);
  if (parsed.ok() && input_closed_) {
    parsed = core::InvalidArgument("no message may follow {\"close\": true}", {},
                                   "message_after_close");
  }
  if (!parsed.ok()) {
    metrics_.CountMessage("in", "invalid");
    return parsed.status();
  }
  metrics_.CountMessage("in", parsed->close ? "close" : parsed->flush ? "flush" : "text");
  if (parsed->text) {
    if (absl::Status status = session_->AddText(*parsed->text); !status.ok()) return status;
  }
  if (parsed->close) {
    input_closed_ = true;
    return session_->End();
  }
  return parsed->flush ? session_->Flush() : absl::OkStatus();
}

void SpeechStream::OnAudio(std::string bytes, int /*sample_rate*/) {
  output_.PostAudio(std::move(bytes));
}

size_t SpeechStream::QueuedAudioBytes() const { return output_.QueuedAudioBytes(); }

void SpeechStream::OnSentenceDone(const service::SentenceReport& report) {
  if (ended_ || closing_) return;
  SendEvent(SegmentDoneEvent(report, timestamps_), "segment_done");
}

void SpeechStream::OnEnd(const service::SessionEnd& end) {
  if (ended_) return WriteLogOnceEnded();
  if (closing_) return;  // ended by a failure or close already reported
  if (end.status.ok()) {
    SendEvent(DoneEvent(end.totals), "done");
    return CloseWith(CloseCode::kNormal, "done");
  }
  if (core::DetailOf(end.status).reason == core::ErrorReason::kDraining && draining_) {
    if (end.dropped_text) {
      log_status_ = 503;
      SendEvent(ErrorEvent(core::Draining(
                    "server is shutting down: text not yet spoken was dropped")),
                "error");
    }
    return CloseWith(CloseCode::kGoingAway, "server is shutting down");
  }
  Fail(end.status);
}

void SpeechStream::OnAudioWritten() {
  if (session_ != nullptr) session_->ResumeAudio();
}

void SpeechStream::OnIdleTimeout() {
  if (ended_ || closing_ || Busy()) return;
  log_status_ = 408;
  CloseWith(CloseCode::kPolicy, "idle timeout: no message for too long");
}

void SpeechStream::Drain() {
  if (ended_ || closing_ || draining_) return;
  draining_ = true;
  if (session_ == nullptr) return CloseWith(CloseCode::kGoingAway, "server is shutting down");
  session_->Drain();  // OnEnd closes, once the running sentence is done
}

void SpeechStream::OnConnectionEnded(ConnectionEnd end, std::optional<int> client_close_code) {
  if (ended_) return;
  ended_ = true;
  if (!closing_) {  // the client ended it
    const bool unfinished = session_ != nullptr && session_->HasUnspokenText();
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
  // Queued work is dropped, a running sentence cancelled; OnEnd writes the log line after it.
  if (session_ != nullptr) session_->Abort(absl::CancelledError("the client went away"));
  WriteLogOnceEnded();
}

void SpeechStream::UpdateReading() {
  const bool open = !ended_ && !closing_;
  const bool backlogged = session_ != nullptr && session_->TakesText() && session_->Backlogged();
  output_.SetReading(open && !backlogged);
}

void SpeechStream::Fail(const absl::Status& status) {
  if (ended_ || closing_) return;
  log_status_ = http::HttpStatusFor(status);
  SendEvent(ErrorEvent(status), "error");
  CloseWith(CloseCodeFor(status), std::string(status.message()));
}

void SpeechStream::CloseWith(CloseCode code, std::string_view reason) {
  closing_ = true;
  close_code_ = static_cast<int>(code);
  output_.Close(code, std::string(reason));
  // Nothing more is spoken: queued sentences dropped, a running one cancelled.
  if (session_ != nullptr && code != CloseCode::kNormal) {
    session_->Abort(absl::CancelledError("the stream is closing"));
  }
}

void SpeechStream::SendEvent(std::string json, std::string_view type) {
  metrics_.CountMessage("out", type);
  output_.SendEvent(std::move(json));
}

// Once the connection is gone and no sentence runs any more (the session has ended).
void SpeechStream::WriteLogOnceEnded() {
  if (logged_ || !ended_ || (session_ != nullptr && !session_->Ended())) return;
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
  if (session_ != nullptr && session_->sentences_started() > 0) {
    session_->Totals().AddToLog(entry);
  }
  entry.total_seconds = SecondsBetween(caller_.started_at, core::Clock::now());
  core::LogRequest(entry);
}

}  // namespace voxserve::transport::websocket
