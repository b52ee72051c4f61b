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
                                         {"model"})) {}

ModelSchedulerMetrics SchedulerMetricFamilies::ForModel(const std::string& model_id) {
  return {&queue_depth_.WithLabels({model_id}), &queue_wait_.WithLabels({model_id}),
          &batch_size_.WithLabels({model_id}), &dropped_.WithLabels({model_id, "deadline"}),
          &dropped_.WithLabels({model_id, "cancelled"}), &synthesized_.WithLabels({model_id}),
          &engine_errors_.WithLabels({model_id})};
}

}  // namespace voxserve::scheduler
