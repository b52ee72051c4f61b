#include "transport/grpc/stream_synthesis.h"

#include <memory>

#include "transport/grpc/call_start.h"
#include "transport/grpc/queued_write_reactor.h"
#include "transport/grpc/request_options.h"
#include "transport/grpc/status_mapping.h"
#include "transport/grpc/unary_call.h"

namespace voxserve::transport::grpc {
namespace {

constexpr const char* kMethod = "SynthesizeStream";

using Response = v1::SynthesizeStreamResponse;
// Raw, as the unary methods (transport/grpc/unary_call.h): each message is serialized as it is
// queued, and a request that does not parse gets INVALID_ARGUMENT, not gRPC's bare UNIMPLEMENTED.
using WriteReactor =
    QueuedWriteReactor<::grpc::ServerWriteReactor<::grpc::ByteBuffer>, ::grpc::ByteBuffer>;

// Owned by gRPC from the method handler's return until OnDone, where it deletes itself. The job
// is set once in Start, before any reaction can run, and held until OnDone: it is paused (owned
// by nobody else) while the client is behind.
class StreamSynthesis final : public WriteReactor {
 public:
  StreamSynthesis(HandlerEnv& env, ::grpc::CallbackServerContext* context)
      : env_(env), context_(context) {}

  void Start(const ::grpc::ByteBuffer* request_bytes);

  // From the sink, serialized on a service thread.
  void SendAudio(std::string bytes, audio::AudioFormat format, int sample_rate) {
    Response message;
    v1::AudioChunk* chunk = message.mutable_audio();
    const size_t size = bytes.size();
    chunk->set_audio(std::move(bytes));
    chunk->set_format(ToProtoFormat(format));
    chunk->set_sample_rate(sample_rate);
    Send(message, size);
  }
  // Before the first chunk; Complete reports it.
  void SetCacheResult(service::CacheResult result) { cache_result_ = result; }
  // With timestamps: after the segment's last chunk (Push keeps the order).
  void SendTimestamps(const service::SegmentTimings& timings, v1::TimestampsMode mode) {
    Response message;
    FillTimestamps(timings, mode, message.mutable_timestamps());
    Send(message, 0);
  }
  // Last call from the sink; Pump (which may Finish) is the last touch of `this`.
  void Complete(absl::Status status, const service::SynthesisSummary& summary) {
    if (!failed_.ok()) status = failed_;
    if (status.ok()) {
      AddCacheTrailer(*context_, cache_result_);
      Response message;
      v1::SynthesisDone* done = message.mutable_done();
      done->set_model(summary.model);
      done->set_voice(summary.voice);
      FillUsage(summary, done->mutable_usage());
      FillTimings(summary, done->mutable_timings());
      absl::StatusOr<::grpc::ByteBuffer> bytes = SerializeMessage(message);
      if (!bytes.ok()) return FinishWith(bytes.status());
      Push(*std::move(bytes), 0);
    }
    FinishWith(status);
  }

 private:
  void OnCancel() override {
    if (job_) job_->Cancel();
  }
  void OnStreamBroken() override {
    if (job_) job_->Cancel();
  }
  void OnMessageWritten() override {
    if (job_) job_->Resume();  // cheap when it is not paused
  }
  void OnDone() override { delete this; }

  // From the sink. A message that cannot be serialized ends the call with that error.
  void Send(const Response& message, size_t audio_bytes) {
    absl::StatusOr<::grpc::ByteBuffer> bytes = SerializeMessage(message);
    if (!bytes.ok()) {
      if (failed_.ok()) failed_ = bytes.status();
      if (job_) job_->Cancel();  // Complete follows and answers with failed_
      return;
    }
    PushAndPump(*std::move(bytes), audio_bytes);
  }

  void FinishWith(const absl::Status& status) {
    ::grpc::Status answer = FinishStatus(*context_, status);
    env_.metrics.CountCall(kMethod, answer.error_code());
    RequestFinishAndPump(std::move(answer));  // the last touch: it may Finish
  }

  HandlerEnv& env_;
  ::grpc::CallbackServerContext* const context_;
  CallStart call_;
  std::shared_ptr<service::PendingJob> job_;  // the job, or its prompt still being cloned
  absl::Status failed_;  // a message that could not be serialized; the sink's thread only
  service::CacheResult cache_result_ = service::CacheResult::kOff;  // the sink's thread only
};

// Owned by the job until OnComplete; calls arrive serialized on a service thread.
class StreamSink final : public service::SynthesisSink {
 public:
  StreamSink(StreamSynthesis* reactor, audio::AudioFormat format, v1::TimestampsMode timestamps)
      : reactor_(reactor), format_(format), timestamps_(timestamps) {}

  void OnStart(int output_sample_rate) override { sample_rate_ = output_sample_rate; }
  void OnCacheResult(service::CacheResult result) override { reactor_->SetCacheResult(result); }
  void OnAudio(std::string bytes) override {
    reactor_->SendAudio(std::move(bytes), format_, sample_rate_);
  }
  void OnTimings(const service::SegmentTimings& timings) override {
    if (timestamps_ != v1::TIMESTAMPS_MODE_NONE) reactor_->SendTimestamps(timings, timestamps_);
  }
  void OnComplete(const absl::Status& status, const service::SynthesisSummary& summary) override {
    reactor_->Complete(status, summary);
  }
  size_t BufferedBytes() const override { return reactor_->QueuedAudioBytes(); }

 private:
  StreamSynthesis* const reactor_;  // valid until Complete finishes the call
  const audio::AudioFormat format_;
  const v1::TimestampsMode timestamps_;
  int sample_rate_ = 0;
};

void StreamSynthesis::Start(const ::grpc::ByteBuffer* request_bytes) {
  absl::StatusOr<CallStart> call = StartCall(*context_, kMethod, env_.gate);
  if (!call.ok()) return FinishWith(call.status());
  call_ = *std::move(call);
  v1::SynthesizeRequest request;
  if (absl::Status parsed = ParseMessage(*request_bytes, request); !parsed.ok()) {
    return FinishWith(parsed);
  }
  absl::StatusOr<service::SynthesisRequest> synthesis =
      ToSynthesisRequest(request.options(), audio::AudioFormat::kPcm, context_->deadline(),
                         env_.service.config().max_timeout_ms);
  if (!synthesis.ok()) return FinishWith(env_.service.RejectUnparsed(synthesis.status()));
  synthesis->text = request.text();
  synthesis->streaming = true;
  call_.Prepare(*synthesis);
  auto sink = std::make_shared<StreamSink>(this, synthesis->format, request.options().timestamps());
  if (!synthesis->prompt_audio.empty()) {  // refusals come back through the sink
    job_ = env_.service.SynthesizeWithPrompt(*std::move(synthesis), std::move(sink));
    return;
  }
  absl::StatusOr<std::shared_ptr<service::SynthesisJob>> job =
      env_.service.Synthesize(*std::move(synthesis), std::move(sink));
  if (!job.ok()) return FinishWith(job.status());
  job_ = std::make_shared<service::PendingJob>();
  job_->Attach(*std::move(job));
}

}  // namespace

::grpc::ServerWriteReactor<::grpc::ByteBuffer>* StartStreamSynthesis(
    HandlerEnv& env, ::grpc::CallbackServerContext* context, const ::grpc::ByteBuffer* request) {
  auto* reactor = new StreamSynthesis(env, context);
  reactor->Start(request);
  return reactor;
}

}  // namespace voxserve::transport::grpc
