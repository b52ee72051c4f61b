#include "scheduler/scheduler_metrics.h"

namespace voxserve::scheduler {

SchedulerMetricFamilies::SchedulerMetricFamilies(core::MetricsRegistry& registry)
    : queue_depth_(registry.AddGauge("voxserve_queue_depth",
                                     "Segments waiting in the model's queue.", {"model"})),
      queue_wait_(registry.AddHistogram("voxserve_queue_wait_seconds",
                                        "Time a segment waited before its batch ran.", {"model"},
                                        core::LatencyBuckets())),
      batch_size_(registry.AddHistogram("voxserve_batch_size", "Segments per engine call.",
                                        {"model"}, {1, 2, 4, 8, 16, 32})),
      dropped_(registry.AddCounter("voxserve_segments_dropped_total",
                                   "Queued segments dropped before reaching the engine.",
                                   {"model", "reason"})),
      synthesized_(registry.AddCounter("voxserve_segments_synthesized_total",
                                       "Segments (sentences) that reached the engine.", {"model"})),
      engine_errors_(registry.AddCounter("voxserve_engine_errors_total",
                                         "Segments the engine failed to synthesize.", {"model"})),
      live_instances_(registry.AddGauge("voxserve_instances_live",
                                        "Engine instances (threads or worker processes) that "
                                        "can take a batch now.",
                                        {"model"})),
      restarts_(registry.AddCounter("voxserve_instance_restarts_total",
                                    "Worker processes restarted after they exited, were killed "
                                    "or stopped answering.",
                                    {"model"})),
      requeued_(registry.AddCounter("voxserve_segments_requeued_total",
                                    "Segments handed to another instance because theirs was "
                                    "lost before it started them.",
                                    {"model"})),
      busy_seconds_(registry.AddCounter("voxserve_instance_busy_seconds_total",
                                        "Seconds each engine instance spent running batches.",
                                        {"model", "worker"})),
      stream_decoding_(registry.AddGauge(
          "voxserve_stream_decoding",
          "Streaming engines: sequences an instance is generating tokens for (CosyVoice: LLM "
          "rows decoding).",
          {"model", "worker"})),
      stream_prefill_waiting_(registry.AddGauge(
          "voxserve_stream_prefill_waiting",
          "Streaming engines: sequences waiting for their prompt's prefill on an instance.",
          {"model", "worker"})),
      stream_vocoder_pending_(registry.AddGauge(
          "voxserve_stream_vocoder_pending",
          "Streaming engines: an instance's vocoder jobs (CosyVoice: flow + HiFT of a piece or "
          "hop) posted or waiting, not done.",
          {"model", "worker"})),
      stream_tokens_(registry.AddCounter("voxserve_stream_tokens_total",
                                         "Streaming engines: tokens generated (CosyVoice: speech "
                                         "tokens of the LLM).",
                                         {"model", "worker"})),
      stream_vocoder_jobs_(registry.AddCounter("voxserve_stream_vocoder_jobs_total",
                                               "Streaming engines: vocoder jobs done.",
                                               {"model", "worker"})),
      stream_vocoder_batched_(registry.AddCounter(
          "voxserve_stream_vocoder_batched_total",
          "Streaming engines: the batch sizes vocoder jobs ran in, summed; divided by "
          "voxserve_stream_vocoder_jobs_total it is the mean batch a job shared.",
          {"model", "worker"})) {}

void StreamInstanceMetrics::Publish(const engine::StreamRunnerStats& stats) {
  auto set = [](core::Gauge* gauge, uint64_t value) {
    if (gauge) gauge->Set(static_cast<double>(value));
  };
  auto add = [](core::Counter* counter, uint64_t total, uint64_t last) {
    if (counter && total != last)
      counter->Increment(static_cast<double>(total >= last ? total - last : total));
  };
  set(decoding, stats.decoding);
  set(prefill_waiting, stats.prefill_waiting);
  set(vocoder_pending, stats.vocoder_pending);
  add(tokens, stats.tokens_total, last_.tokens_total);
  add(vocoder_jobs, stats.vocoder_jobs_total, last_.vocoder_jobs_total);
  add(vocoder_batched, stats.vocoder_batched_total, last_.vocoder_batched_total);
  last_ = stats;
}

ModelSchedulerMetrics SchedulerMetricFamilies::ForModel(const std::string& model_id) {
  ModelSchedulerMetrics metrics;
  metrics.queue_depth = &queue_depth_.WithLabels({model_id});
  metrics.queue_wait_seconds = &queue_wait_.WithLabels({model_id});
  metrics.batch_size = &batch_size_.WithLabels({model_id});
  metrics.dropped_expired = &dropped_.WithLabels({model_id, "deadline"});
  metrics.dropped_cancelled = &dropped_.WithLabels({model_id, "cancelled"});
  metrics.synthesized = &synthesized_.WithLabels({model_id});
  metrics.engine_errors = &engine_errors_.WithLabels({model_id});
  metrics.live_instances = &live_instances_.WithLabels({model_id});
  metrics.instance_restarts = &restarts_.WithLabels({model_id});
  metrics.requeued = &requeued_.WithLabels({model_id});
  // WithLabels finds or creates the child; the family outlives every scheduler.
  metrics.instance_busy_seconds = [family = &busy_seconds_, model_id](int index) {
    return &family->WithLabels({model_id, std::to_string(index)});
  };
  // The families (in the registry) outlive this object; the lambda keeps pointers to them.
  metrics.instance_stream = [decoding = &stream_decoding_, prefill = &stream_prefill_waiting_,
                             pending = &stream_vocoder_pending_, tokens = &stream_tokens_,
                             jobs = &stream_vocoder_jobs_, batched = &stream_vocoder_batched_,
                             model_id](int index) {
    const std::vector<std::string> labels = {model_id, std::to_string(index)};
    StreamInstanceMetrics stream;
    stream.decoding = &decoding->WithLabels(labels);
    stream.prefill_waiting = &prefill->WithLabels(labels);
    stream.vocoder_pending = &pending->WithLabels(labels);
    stream.tokens = &tokens->WithLabels(labels);
    stream.vocoder_jobs = &jobs->WithLabels(labels);
    stream.vocoder_batched = &batched->WithLabels(labels);
    return stream;
  };
  return metrics;
}

}  // namespace voxserve::scheduler
