#include "transport/grpc/incremental_synthesis.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>

#include "core/error.h"
#include "text/text_accumulator.h"
#include "transport/grpc/call_start.h"
#include "transport/grpc/queued_write_reactor.h"
#include "transport/grpc/request_options.h"
#include "transport/grpc/status_mapping.h"

namespace voxserve::transport::grpc {
namespace {

constexpr const char* kMethod = "StreamingSynthesize";

// Complete sentences waiting for their turn before the call stops reading from the client:
// HTTP/2 flow control then holds the sender back. Each is at most limits.max_segment_chars,
// so a call buffers a few tens of KiB of text at most (plus one request message).
constexpr size_t kMaxWaitingSentences = 16;

using Request = v1::StreamingSynthesizeRequest;
using Response = v1::StreamingSynthesizeResponse;
using BidiReactor = QueuedWriteReactor<::grpc::ServerBidiReactor<Request, Response>, Response>;

double SecondsBetween(core::Clock::time_point from, core::Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// Owned by gRPC from the method handler's return until OnDone, where it deletes itself.
// Reactions run on gRPC threads, sink calls on service threads; all state is under mutex_. gRPC
// operations (StartRead, Pump) are started only after mutex_ is released (gRPC may run a
// reaction inline), in the order a FollowUp lists them. Finish is requested only while no
// synthesis runs, and a sentence's completion holds the Finish back until it returns, so no
// sink can touch the reactor once it may be deleted.
class IncrementalSynthesis final : public BidiReactor {
 public:
  IncrementalSynthesis(HandlerEnv& env, ::grpc::CallbackServerContext* context)
      : env_(env), context_(context) {}

  void Start();

  // From the current sentence's sink, serialized on a service thread.
  void SendAudio(std::string bytes, int sample_rate);
  void SentenceComplete(const absl::Status& status, const service::SynthesisSummary& summary);

 private:
  enum class Phase { kAwaitingConfig, kOpen, kInputDone, kClosing };
  struct Sentence {
    std::string text;
    core::Clock::time_point completed_at;
  };
  // What to do once mutex_ is released.
  struct FollowUp {
    bool read = false;                              // holds the writer (Hold) until started
    std::shared_ptr<service::SynthesisJob> cancel;  // the running synthesis, to cancel
  };

  void OnReadDone(bool ok) override;
  void OnCancel() override;
  void OnStreamBroken() override { OnCancel(); }
  void OnMessageWritten() override;
  void OnDone() override { delete this; }

  // Under mutex_.
  absl::Status HandleMessage(const Request& message);
  absl::Status Configure(const v1::SynthesisOptions& options);
  absl::Status TakeSentences(absl::StatusOr<std::vector<std::string>> sentences);
  void ReadMoreOrPause(FollowUp& follow_up);
  void StartNextSentence(FollowUp& follow_up);
  void Fail(const absl::Status& status, FollowUp& follow_up);
  void Close(const absl::Status& status);
  Response DoneMessage() const;

  void Run(FollowUp follow_up);  // without mutex_; Pump last (it may Finish)

  HandlerEnv& env_;
  ::grpc::CallbackServerContext* const context_;
  const core::Clock::time_point started_at_ = core::Clock::now();
  Request incoming_;  // the read in flight writes here; read under mutex_ in OnReadDone

  std::mutex mutex_;
  Phase phase_ = Phase::kAwaitingConfig;
  CallStart call_;
  v1::SynthesisOptions options_;
  std::optional<text::TextAccumulator> accumulator_;
  std::deque<Sentence> waiting_;
  bool read_paused_ = false;
  std::shared_ptr<service::SynthesisJob> job_;  // the sentence being synthesized, if any
  Sentence current_;
  int sentences_started_ = 0;
  std::optional<absl::Status> failure_;  // waits for job_ to end, then closes the call
  // Totals for the final `done`.
  service::SynthesisSummary totals_;
  std::optional<core::Clock::time_point> first_audio_at_;
};

// Owned by one sentence's job until OnComplete; calls arrive serialized on a service thread.
class SentenceSink final : public service::SynthesisSink {
 public:
  explicit SentenceSink(IncrementalSynthesis* reactor) : reactor_(reactor) {}
  void OnStart(int output_sample_rate) override { sample_rate_ = output_sample_rate; }
  void OnAudio(std::string bytes) override { reactor_->SendAudio(std::move(bytes), sample_rate_); }
  void OnComplete(const absl::Status& status, const service::SynthesisSummary& summary) override {
    reactor_->SentenceComplete(status, summary);
  }
  size_t BufferedBytes() const override { return reactor_->QueuedAudioBytes(); }

 private:
  IncrementalSynthesis* const reactor_;  // alive: the call is not finished while a job runs
  int sample_rate_ = 0;
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
  FollowUp follow_up;
  {
    std::lock_guard lock(mutex_);
    if (phase_ == Phase::kClosing) return;
    absl::Status status;
    if (!ok && context_->IsCancelled()) {
      status = absl::CancelledError("the client cancelled the call");
    } else if (!ok) {  // the client half-closed: as `end`
      status = phase_ == Phase::kAwaitingConfig
                   ? core::InvalidArgument("the stream ended before its config", "config",
                                           "missing_config")
                   : TakeSentences(accumulator_->Flush());
      if (phase_ == Phase::kOpen) phase_ = Phase::kInputDone;
    } else {
      status = HandleMessage(incoming_);
    }
    if (!status.ok()) {
      Fail(status, follow_up);
    } else {
      ReadMoreOrPause(follow_up);
      StartNextSentence(follow_up);
    }
  }
  Run(std::move(follow_up));
}

absl::Status IncrementalSynthesis::HandleMessage(const Request& message) {
  if (message.request_case() == Request::kConfig) {
    if (phase_ != Phase::kAwaitingConfig) {
      return core::InvalidArgument("config may be sent once, as the first message", "config",
                                   "repeated_config");
    }
    return Configure(message.config());
  }
  if (phase_ == Phase::kAwaitingConfig) {
    return core::InvalidArgument("the first message must be config", "config", "missing_config");
  }
  switch (message.request_case()) {
    case Request::kText:
      return TakeSentences(accumulator_->Append(message.text()));
    case Request::kFlush:
      return message.flush() ? TakeSentences(accumulator_->Flush()) : absl::OkStatus();
    case Request::kEnd:
      if (!message.end()) return absl::OkStatus();
      phase_ = Phase::kInputDone;
      return TakeSentences(accumulator_->Flush());
    default:
      return core::InvalidArgument("a message must hold config, text, flush or end", "request",
                                   "empty_message");
  }
}

absl::Status IncrementalSynthesis::Configure(const v1::SynthesisOptions& options) {
  // Everything a sentence's Synthesize will check that can be checked without text.
  absl::StatusOr<service::SynthesisRequest> request =
      ToSynthesisRequest(options, audio::AudioFormat::kPcm, context_->deadline(),
                         env_.service.config().max_timeout_ms);
  if (!request.ok()) return request.status();
  call_.Prepare(*request);  // the caller's allowed models
  absl::StatusOr<const text::SentenceSplitter*> splitter =
      env_.service.SplitterForVoice(options.model(), options.voice(), request->allowed_models);
  if (!splitter.ok()) return splitter.status();
  options_ = options;
  accumulator_.emplace(**splitter,
                       static_cast<size_t>(std::max(1, env_.service.config().max_segment_chars)));
  phase_ = Phase::kOpen;
  return absl::OkStatus();
}

absl::Status IncrementalSynthesis::TakeSentences(
    absl::StatusOr<std::vector<std::string>> sentences) {
  if (!sentences.ok()) return sentences.status();
  const core::Clock::time_point now = core::Clock::now();
  for (std::string& text : *sentences) waiting_.push_back({std::move(text), now});
  return absl::OkStatus();
}

void IncrementalSynthesis::ReadMoreOrPause(FollowUp& follow_up) {
  if (phase_ != Phase::kAwaitingConfig && phase_ != Phase::kOpen) return;
  if (waiting_.size() >= kMaxWaitingSentences) {
    read_paused_ = true;
    return;
  }
  read_paused_ = false;
  follow_up.read = true;
  Hold();
}

void IncrementalSynthesis::StartNextSentence(FollowUp& follow_up) {
  if (phase_ == Phase::kClosing || job_ != nullptr) return;
  if (waiting_.empty()) {
    if (phase_ != Phase::kInputDone) return;
    Push(DoneMessage(), 0);
    return Close(absl::OkStatus());
  }
  Sentence sentence = std::move(waiting_.front());
  waiting_.pop_front();
  absl::StatusOr<service::SynthesisRequest> request =
      ToSynthesisRequest(options_, audio::AudioFormat::kPcm, context_->deadline(),
                         env_.service.config().max_timeout_ms);
  if (!request.ok()) return Close(request.status());
  request->text = sentence.text;
  request->streaming = true;
  request->continues_stream = sentences_started_ > 0;
  request->context.received_at = sentence.completed_at;  // timings and timeout count from here
  call_.Prepare(*request);
  request->context.request_id += "/" + std::to_string(sentences_started_);
  absl::StatusOr<std::shared_ptr<service::SynthesisJob>> job =
      env_.service.Synthesize(*std::move(request), std::make_shared<SentenceSink>(this));
  if (!job.ok()) return Close(job.status());
  job_ = *std::move(job);
  current_ = std::move(sentence);
  ++sentences_started_;
  if (read_paused_ && !follow_up.read) ReadMoreOrPause(follow_up);
}

void IncrementalSynthesis::SendAudio(std::string bytes, int sample_rate) {
  Response message;
  v1::AudioChunk* chunk = message.mutable_audio();
  const size_t size = bytes.size();
  chunk->set_audio(std::move(bytes));
  chunk->set_sample_rate(sample_rate);
  {
    std::lock_guard lock(mutex_);
    if (!first_audio_at_) first_audio_at_ = core::Clock::now();
    // Validated by Configure, which made PCM the default.
    chunk->set_format(options_.format() == v1::AUDIO_FORMAT_UNSPECIFIED ? v1::AUDIO_FORMAT_PCM
                                                                        : options_.format());
    Push(std::move(message), size);
  }
  Pump();
}

void IncrementalSynthesis::SentenceComplete(const absl::Status& status,
                                            const service::SynthesisSummary& summary) {
  // The Close below lets any thread's Pump (a write completing, OnCancel's follow-up) Finish the
  // call, and gRPC delete the reactor, as soon as mutex_ is released: hold the Finish back until
  // this call is done with the reactor. No Finish can be under way yet: while a job runs, no
  // Close is requested.
  Hold();
  FollowUp follow_up;
  {
    std::lock_guard lock(mutex_);
    job_.reset();
    if (failure_) {
      Close(*failure_);
    } else if (!status.ok()) {
      Close(status);
    } else {
      Response message;
      v1::SentenceDone* done = message.mutable_sentence_done();
      done->set_index(sentences_started_ - 1);
      done->set_text(current_.text);
      FillUsage(summary, done->mutable_usage());
      FillTimings(summary, done->mutable_timings());
      Push(std::move(message), 0);  // before the next sentence can deliver audio
      totals_.AddSentence(summary);
      StartNextSentence(follow_up);
    }
  }
  Run(std::move(follow_up));
  Release();  // the last touch: it may Finish
}

void IncrementalSynthesis::OnCancel() {
  FollowUp follow_up;
  {
    std::lock_guard lock(mutex_);
    Fail(absl::CancelledError("the client cancelled the call"), follow_up);
  }
  Run(std::move(follow_up));
}

void IncrementalSynthesis::OnMessageWritten() {
  std::shared_ptr<service::SynthesisJob> job;
  {
    std::lock_guard lock(mutex_);
    job = job_;
  }
  if (job) job->Resume();  // cheap when it is not paused
}

void IncrementalSynthesis::Fail(const absl::Status& status, FollowUp& follow_up) {
  if (phase_ == Phase::kClosing) return;
  if (job_ == nullptr) return Close(status);
  // The running sentence must end first (its sink points here): cancel it, close after.
  if (!failure_) failure_ = status;
  follow_up.cancel = job_;
}

void IncrementalSynthesis::Close(const absl::Status& status) {
  if (phase_ == Phase::kClosing) return;
  phase_ = Phase::kClosing;
  waiting_.clear();
  ::grpc::Status answer = FinishStatus(*context_, status);
  env_.metrics.CountCall(kMethod, answer.error_code());
  RequestFinish(std::move(answer));
}

Response IncrementalSynthesis::DoneMessage() const {
  Response message;
  v1::SynthesisDone* done = message.mutable_done();
  done->set_model(totals_.model);
  done->set_voice(totals_.voice);
  FillUsage(totals_, done->mutable_usage());
  service::SynthesisSummary timings = totals_;
  if (first_audio_at_) {
    timings.time_to_first_audio_seconds = SecondsBetween(started_at_, *first_audio_at_);
  }
  timings.total_seconds = SecondsBetween(started_at_, core::Clock::now());
  FillTimings(timings, done->mutable_timings());
  return message;
}

void IncrementalSynthesis::Run(FollowUp follow_up) {
  if (follow_up.cancel) follow_up.cancel->Cancel();
  if (follow_up.read) {
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
