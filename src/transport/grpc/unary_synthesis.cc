#include "transport/grpc/unary_synthesis.h"

#include <memory>

#include "transport/grpc/call_start.h"
#include "transport/grpc/request_options.h"
#include "transport/grpc/status_mapping.h"

namespace voxserve::transport::grpc {
namespace {

constexpr const char* kMethod = "Synthesize";

// Owned by gRPC from the method handler's return until OnDone, where it deletes itself. Holds
// the job until then (OnCancel needs it; a job must be held until its sink's OnComplete).
class UnarySynthesis final : public ::grpc::ServerUnaryReactor {
 public:
  UnarySynthesis(HandlerEnv& env, ::grpc::CallbackServerContext* context,
                 v1::SynthesizeResponse* response)
      : env_(env), context_(context), response_(response) {}

  // On the handler's thread, before the reactor is returned: OnCancel and OnDone cannot run yet.
  void Start(const v1::SynthesizeRequest& request);

  // From the sink, on a service thread, exactly once. Finish is the last touch of `this`.
  void Complete(const absl::Status& status, const service::SynthesisSummary& summary,
                audio::AudioFormat format, int sample_rate, std::string audio,
                ::google::protobuf::RepeatedPtrField<v1::SegmentTimestamps> timestamps);

 private:
  void OnCancel() override {
    if (job_) job_->Cancel();
  }
  void OnDone() override { delete this; }
  void FinishWith(const absl::Status& status) {
    ::grpc::Status answer = FinishStatus(*context_, status);
    env_.metrics.CountCall(kMethod, answer.error_code());
    Finish(std::move(answer));
  }

  HandlerEnv& env_;
  ::grpc::CallbackServerContext* const context_;
  v1::SynthesizeResponse* const response_;  // gRPC's, written once by Complete
  CallStart call_;
  std::shared_ptr<service::PendingJob>
      job_;  // the job, or its prompt still being cloned  // set in Start, read by OnCancel
};

// Owned by the job until OnComplete; calls arrive serialized on a service thread. A
// non-streaming request delivers the whole file in one OnAudio.
class UnarySink final : public service::SynthesisSink {
 public:
  UnarySink(UnarySynthesis* reactor, audio::AudioFormat format, v1::TimestampsMode timestamps)
      : reactor_(reactor), format_(format), timestamps_(timestamps) {}

  void OnStart(int output_sample_rate) override { sample_rate_ = output_sample_rate; }
  void OnAudio(std::string bytes) override { audio_ += bytes; }
  void OnTimings(const service::SegmentTimings& timings) override {
    if (timestamps_ != v1::TIMESTAMPS_MODE_NONE) {
      FillTimestamps(timings, timestamps_, timestamps_out_.Add());
    }
  }
  void OnComplete(const absl::Status& status, const service::SynthesisSummary& summary) override {
    int rate = sample_rate_ > 0 ? sample_rate_ : summary.output_sample_rate;
    reactor_->Complete(status, summary, format_, rate, std::move(audio_),
                       std::move(timestamps_out_));
  }
  size_t BufferedBytes() const override { return 0; }  // asked of streaming requests only

 private:
  UnarySynthesis* const reactor_;  // valid until Complete finishes the call
  const audio::AudioFormat format_;
  const v1::TimestampsMode timestamps_;
  int sample_rate_ = 0;
  std::string audio_;
  ::google::protobuf::RepeatedPtrField<v1::SegmentTimestamps> timestamps_out_;
};

void UnarySynthesis::Start(const v1::SynthesizeRequest& request) {
  absl::StatusOr<CallStart> call = StartCall(*context_, kMethod, env_.gate);
  if (!call.ok()) return FinishWith(call.status());
  call_ = *std::move(call);
  absl::StatusOr<service::SynthesisRequest> synthesis =
      ToSynthesisRequest(request.options(), audio::AudioFormat::kWav, context_->deadline(),
                         env_.service.config().max_timeout_ms);
  if (!synthesis.ok()) return FinishWith(env_.service.RejectUnparsed(synthesis.status()));
  synthesis->text = request.text();
  call_.Prepare(*synthesis);
  auto sink = std::make_shared<UnarySink>(this, synthesis->format, request.options().timestamps());
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

void UnarySynthesis::Complete(
    const absl::Status& status, const service::SynthesisSummary& summary, audio::AudioFormat format,
    int sample_rate, std::string audio,
    ::google::protobuf::RepeatedPtrField<v1::SegmentTimestamps> timestamps) {
  if (status.ok()) {
    *response_->mutable_timestamps() = std::move(timestamps);
    response_->set_audio(std::move(audio));
    response_->set_format(ToProtoFormat(format));
    response_->set_sample_rate(sample_rate);
    response_->set_model(summary.model);
    response_->set_voice(summary.voice);
    FillUsage(summary, response_->mutable_usage());
    FillTimings(summary, response_->mutable_timings());
  }
  FinishWith(status);
}

}  // namespace

::grpc::ServerUnaryReactor* StartUnarySynthesis(HandlerEnv& env,
                                                ::grpc::CallbackServerContext* context,
                                                const v1::SynthesizeRequest* request,
                                                v1::SynthesizeResponse* response) {
  auto* reactor = new UnarySynthesis(env, context, response);
  reactor->Start(*request);
  return reactor;
}

}  // namespace voxserve::transport::grpc
