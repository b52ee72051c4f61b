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
                                       "Segments (sentences) that reached the engine.",
                                       {"model"})),
      engine_errors_(registry.AddCounter("voxserve_engine_errors_total",
                                         "Segments the engine failed to synthesize.",
                                         {"model"})),
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
                                        {"model", "worker"})) {}

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
  return metrics;
}

}  // namespace voxserve::scheduler
