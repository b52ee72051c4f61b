#include "transport/grpc/unary_synthesis.h"

#include <memory>

#include "transport/grpc/request_options.h"
#include "transport/grpc/unary_call.h"
#include "voxserve/v1/tts.pb.h"

namespace voxserve::transport::grpc {
namespace {

using SynthesizeCall = UnaryCall<v1::SynthesizeRequest, v1::SynthesizeResponse>;

// Owned by gRPC from the method handler's return until OnDone, where it deletes itself. Holds
// the job until then (OnCancel needs it; a job must be held until its sink's OnComplete).
class UnarySynthesis final : public SynthesizeCall {
 public:
  using SynthesizeCall::SynthesizeCall;

  // On the handler's thread, before the reactor is returned: OnCancel and OnDone cannot run yet.
  void Run(const ::grpc::ByteBuffer* request_bytes);

  // From the sink, on a service thread, exactly once. Answer is the last touch of `this`.
  void Complete(const absl::Status& status, const service::SynthesisSummary& summary,
                audio::AudioFormat format, int sample_rate, std::string audio,
                ::google::protobuf::RepeatedPtrField<v1::SegmentTimestamps> timestamps,
                service::CacheResult cache_result);

 private:
  void OnCancel() override {
    if (job_) job_->Cancel();
  }

  CallStart call_;
  std::shared_ptr<service::PendingJob>
      job_;  // the job, or its prompt still being cloned; set in Run, read by OnCancel
};

// Owned by the job until OnComplete; calls arrive serialized on a service thread. A
// non-streaming request delivers the whole file in one OnAudio.
class UnarySink final : public service::SynthesisSink {
 public:
  UnarySink(UnarySynthesis* reactor, audio::AudioFormat format, v1::TimestampsMode timestamps)
      : reactor_(reactor), format_(format), timestamps_(timestamps) {}

  void OnStart(int output_sample_rate) override { sample_rate_ = output_sample_rate; }
  void OnCacheResult(service::CacheResult result) override { cache_result_ = result; }
  void OnAudio(std::string bytes) override { audio_ += bytes; }
  void OnTimings(const service::SegmentTimings& timings) override {
    if (timestamps_ != v1::TIMESTAMPS_MODE_NONE) {
      FillTimestamps(timings, timestamps_, timestamps_out_.Add());
    }
  }
  void OnComplete(const absl::Status& status, const service::SynthesisSummary& summary) override {
    int rate = sample_rate_ > 0 ? sample_rate_ : summary.output_sample_rate;
    reactor_->Complete(status, summary, format_, rate, std::move(audio_),
                       std::move(timestamps_out_), cache_result_);
  }
  size_t BufferedBytes() const override { return 0; }  // asked of streaming requests only

 private:
  UnarySynthesis* const reactor_;  // valid until Complete finishes the call
  const audio::AudioFormat format_;
  const v1::TimestampsMode timestamps_;
  int sample_rate_ = 0;
  service::CacheResult cache_result_ = service::CacheResult::kOff;
  std::string audio_;
  ::google::protobuf::RepeatedPtrField<v1::SegmentTimestamps> timestamps_out_;
};

void UnarySynthesis::Run(const ::grpc::ByteBuffer* request_bytes) {
  absl::StatusOr<CallStart> call = Start(request_bytes);
  if (!call.ok()) return;  // answered
  call_ = *std::move(call);
  const v1::SynthesizeRequest& request = this->request();
  HandlerEnv& env = this->env();
  absl::StatusOr<service::SynthesisRequest> synthesis =
      ToSynthesisRequest(request.options(), audio::AudioFormat::kWav, context().deadline(),
                         env.service.config().max_timeout_ms);
  if (!synthesis.ok()) return Answer(env.service.RejectUnparsed(synthesis.status()));
  synthesis->text = request.text();
  call_.Prepare(*synthesis);
  auto sink = std::make_shared<UnarySink>(this, synthesis->format, request.options().timestamps());
  if (!synthesis->prompt_audio.empty()) {  // refusals come back through the sink
    job_ = env.service.SynthesizeWithPrompt(*std::move(synthesis), std::move(sink));
    return;
  }
  absl::StatusOr<std::shared_ptr<service::SynthesisJob>> job =
      env.service.Synthesize(*std::move(synthesis), std::move(sink));
  if (!job.ok()) return Answer(job.status());
  job_ = std::make_shared<service::PendingJob>();
  job_->Attach(*std::move(job));
}

void UnarySynthesis::Complete(
    const absl::Status& status, const service::SynthesisSummary& summary, audio::AudioFormat format,
    int sample_rate, std::string audio,
    ::google::protobuf::RepeatedPtrField<v1::SegmentTimestamps> timestamps,
    service::CacheResult cache_result) {
  if (status.ok()) {
    AddCacheTrailer(context(), cache_result);
    v1::SynthesizeResponse* out = response();
    *out->mutable_timestamps() = std::move(timestamps);
    out->set_audio(std::move(audio));
    out->set_format(ToProtoFormat(format));
    out->set_sample_rate(sample_rate);
    out->set_model(summary.model);
    out->set_voice(summary.voice);
    FillUsage(summary, out->mutable_usage());
    FillTimings(summary, out->mutable_timings());
  }
  Answer(status);
}

}  // namespace

::grpc::ServerUnaryReactor* StartUnarySynthesis(HandlerEnv& env,
                                                ::grpc::CallbackServerContext* context,
                                                const ::grpc::ByteBuffer* request,
                                                ::grpc::ByteBuffer* reply) {
  auto* reactor = new UnarySynthesis(env, context, "Synthesize", reply);
  reactor->Run(request);
  return reactor;
}

}  // namespace voxserve::transport::grpc
