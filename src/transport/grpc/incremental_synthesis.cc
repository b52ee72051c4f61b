#include "transport/grpc/incremental_synthesis.h"

#include <memory>
#include <mutex>

#include "core/error.h"
#include "service/speech_session.h"
#include "transport/grpc/call_start.h"
#include "transport/grpc/queued_write_reactor.h"
#include "transport/grpc/request_options.h"
#include "transport/grpc/status_mapping.h"

namespace voxserve::transport::grpc {
namespace {

constexpr const char* kMethod = "StreamingSynthesize";

using Request = v1::StreamingSynthesizeRequest;
using Response = v1::StreamingSynthesizeResponse;
using BidiReactor = QueuedWriteReactor<::grpc::ServerBidiReactor<Request, Response>, Response>;

// gRPC deadlines are wall-clock; the session's are steady.
core::Clock::time_point SteadyDeadline(std::chrono::system_clock::time_point deadline) {
  if (deadline == std::chrono::system_clock::time_point::max()) {
    return core::Clock::time_point::max();
  }
  return core::Clock::now() + std::chrono::duration_cast<core::Clock::duration>(
                                  deadline - std::chrono::system_clock::now());
}

// Owned by gRPC from the method handler's return until OnDone, where it deletes itself; owns
// the session. Reactions run on gRPC threads, session completions on service threads; every
// session call and every serialized session event happens under mutex_ (OnAudio, from a
// service thread, takes it itself). gRPC operations (StartRead, Pump) are started only after
// mutex_ is released (gRPC may run a reaction inline). The call is finished only from the
// session's OnEnd (no sentence runs any more) or before a session exists, and a completion holds
// the Finish back until it returns, so nothing touches the reactor once it may be deleted.
class IncrementalSynthesis final : public BidiReactor, private service::SpeechSession::Listener {
 public:
  IncrementalSynthesis(HandlerEnv& env, ::grpc::CallbackServerContext* context)
      : env_(env), context_(context) {}

  void Start();

 private:
  void OnReadDone(bool ok) override;
  void OnCancel() override;
  void OnStreamBroken() override { OnCancel(); }
  void OnMessageWritten() override;
  void OnDone() override { delete this; }

  // service::SpeechSession::Listener
  void OnAudio(std::string bytes, int sample_rate) override;
  size_t QueuedAudioBytes() const override { return BidiReactor::QueuedAudioBytes(); }
  void OnSentenceDone(const service::SentenceReport& report) override;
  void OnEnd(const service::SessionEnd& end) override;

  // Under mutex_.
  absl::Status HandleMessage(const Request& message);
  absl::Status Configure(const v1::SynthesisOptions& options);
  bool ReadMoreOrPause();  // true: start a read (Hold() has been called for it)
  void Fail(const absl::Status& status);
  void Close(const absl::Status& status);

  // Without mutex_: a read when asked for, then Pump (it may Finish).
  void Continue(bool read);
  // A session completion, from a service thread.
  void RunCompletion(absl::AnyInvocable<void() &&> task);

  HandlerEnv& env_;
  ::grpc::CallbackServerContext* const context_;
  const core::Clock::time_point started_at_ = core::Clock::now();
  Request incoming_;  // the read in flight writes here; read under mutex_ in OnReadDone

  std::mutex mutex_;
  bool closing_ = false;
  bool read_paused_ = false;  // no read in flight: the session's queue was full
  CallStart call_;
  v1::AudioFormat format_ = v1::AUDIO_FORMAT_PCM;
  v1::TimestampsMode timestamps_ = v1::TIMESTAMPS_MODE_NONE;  // set with the config
  std::unique_ptr<service::SpeechSession> session_;  // from the config message on
};

void IncrementalSynthesis::Start() {
  absl::StatusOr<CallStart> call = StartCall(*context_, kMethod, env_.gate);
  std::unique_lock lock(mutex_);
  if (!call.ok()) {
    Close(call.status());
    lock.unlock();
    return Pump();
  }
  call_ = *std::move(call);
  lock.unlock();
  StartRead(&incoming_);  // before the reactor is returned: nothing can finish the call yet
}

void IncrementalSynthesis::OnReadDone(bool ok) {
  bool read = false;
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
    absl::Status status;
    if (!ok && context_->IsCancelled()) {
      status = absl::CancelledError("the client cancelled the call");
    } else if (!ok) {  // the client half-closed: as `end`
      status = session_ == nullptr ? core::InvalidArgument("the stream ended before its config",
                                                           "config", "missing_config")
                                   : session_->End();
    } else {
      status = HandleMessage(incoming_);
    }
    if (!status.ok()) {
      Fail(status);
    } else {
      read = ReadMoreOrPause();
    }
  }
  Continue(read);
}

absl::Status IncrementalSynthesis::HandleMessage(const Request& message) {
  if (message.request_case() == Request::kConfig) {
    if (session_ != nullptr) {
      return core::InvalidArgument("config may be sent once, as the first message", "config",
                                   "repeated_config");
    }
    return Configure(message.config());
  }
  if (session_ == nullptr) {
    return core::InvalidArgument("the first message must be config", "config", "missing_config");
  }
  switch (message.request_case()) {
    case Request::kText:
      return session_->AddText(message.text());
    case Request::kFlush:
      return message.flush() ? session_->Flush() : absl::OkStatus();
    case Request::kEnd:
      return message.end() ? session_->End() : absl::OkStatus();
    default:
      return core::InvalidArgument("a message must hold config, text, flush or end", "request",
                                   "empty_message");
  }
}

absl::Status IncrementalSynthesis::Configure(const v1::SynthesisOptions& options) {
  // The call's deadline is the session's: it caps each sentence's timeout as it comes.
  absl::StatusOr<service::SynthesisRequest> request =
      ToSynthesisRequest(options, audio::AudioFormat::kPcm,
                         std::chrono::system_clock::time_point::max(),
                         env_.service.config().max_timeout_ms);
  if (!request.ok()) return env_.service.RejectUnparsed(request.status());
  if (!request->prompt_audio.empty()) {
    return env_.service.RejectUnparsed(core::InvalidArgument(
        "ref_audio is taken by Synthesize and SynthesizeStream; a StreamingSynthesize session "
        "speaks registered voices (CreateVoice, then name it in voice)",
        "ref_audio", "ref_audio_not_supported"));
  }
  call_.Prepare(*request);  // the request id and the caller's allowed models
  const v1::AudioFormat format = ToProtoFormat(request->format);
  timestamps_ = options.timestamps();
  service::SessionOptions session_options;
  session_options.request = *std::move(request);
  session_options.started_at = started_at_;
  session_options.deadline = SteadyDeadline(context_->deadline());
  absl::StatusOr<std::unique_ptr<service::SpeechSession>> session =
      service::SpeechSession::Create(env_.service, std::move(session_options), *this,
                                     [this](absl::AnyInvocable<void() &&> task) {
                                       RunCompletion(std::move(task));
                                     });
  if (!session.ok()) return session.status();
  session_ = *std::move(session);
  format_ = format;
  return absl::OkStatus();
}

bool IncrementalSynthesis::ReadMoreOrPause() {
  if (closing_ || (session_ != nullptr && !session_->TakesText())) return false;
  read_paused_ = session_ != nullptr && session_->Backlogged();
  if (read_paused_) return false;
  Hold();  // released once the read has started
  return true;
}

void IncrementalSynthesis::RunCompletion(absl::AnyInvocable<void() &&> task) {
  // The task may end the session and request the Finish, which any thread's Pump (a write
  // completing) may then carry out: hold it back until this call is done with the reactor.
  Hold();
  bool read = false;
  {
    std::lock_guard lock(mutex_);
    std::move(task)();
    if (read_paused_) read = ReadMoreOrPause();  // a sentence started: the queue has room
  }
  Continue(read);
  Release();  // the last touch: it may Finish
}

void IncrementalSynthesis::OnAudio(std::string bytes, int sample_rate) {
  Response message;
  v1::AudioChunk* chunk = message.mutable_audio();
  const size_t size = bytes.size();
  chunk->set_audio(std::move(bytes));
  chunk->set_sample_rate(sample_rate);
  {
    std::lock_guard lock(mutex_);
    chunk->set_format(format_);
    Push(std::move(message), size);
  }
  Pump();
}

void IncrementalSynthesis::OnSentenceDone(const service::SentenceReport& report) {
  Response message;
  v1::SentenceDone* done = message.mutable_sentence_done();
  done->set_index(report.index);
  done->set_text(report.text);
  FillUsage(report.summary, done->mutable_usage());
  FillTimings(report.summary, done->mutable_timings());
  if (timestamps_ != v1::TIMESTAMPS_MODE_NONE) {
    for (const service::SegmentTimings& segment : report.timings) {
      FillTimestamps(segment, timestamps_, done->add_timestamps());
    }
  }
  Push(std::move(message), 0);  // before the next sentence can deliver audio
}

void IncrementalSynthesis::OnEnd(const service::SessionEnd& end) {
  if (end.status.ok()) {
    Response message;
    v1::SynthesisDone* done = message.mutable_done();
    done->set_model(end.totals.model);
    done->set_voice(end.totals.voice);
    FillUsage(end.totals, done->mutable_usage());
    FillTimings(end.totals, done->mutable_timings());
    Push(std::move(message), 0);
  }
  Close(end.status);
}

void IncrementalSynthesis::OnCancel() {
  {
    std::lock_guard lock(mutex_);
    Fail(absl::CancelledError("the client cancelled the call"));
  }
  Pump();
}

void IncrementalSynthesis::OnMessageWritten() {
  service::SpeechSession* session;
  {
    std::lock_guard lock(mutex_);
    session = session_.get();
  }
  if (session != nullptr) session->ResumeAudio();  // safe cross thread; lives as long as we do
}

// The session ends the call once its running sentence is done (its sink points here).
void IncrementalSynthesis::Fail(const absl::Status& status) {
  if (closing_) return;
  if (session_ == nullptr) return Close(status);
  session_->Abort(status);  // OnEnd closes
}

void IncrementalSynthesis::Close(const absl::Status& status) {
  if (closing_) return;
  closing_ = true;
  ::grpc::Status answer = FinishStatus(*context_, status);
  env_.metrics.CountCall(kMethod, answer.error_code());
  RequestFinish(std::move(answer));
}

void IncrementalSynthesis::Continue(bool read) {
  if (read) {
    StartRead(&incoming_);
    Release();  // pumps
  } else {
    Pump();
  }
}

}  // namespace

::grpc::ServerBidiReactor<Request, Response>* StartIncrementalSynthesis(
    HandlerEnv& env, ::grpc::CallbackServerContext* context) {
  auto* reactor = new IncrementalSynthesis(env, context);
  reactor->Start();
  return reactor;
}

}  // namespace voxserve::transport::grpc
