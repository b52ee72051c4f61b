// The scheduler's metrics, registered once per process and labelled by model.
#pragma once

#include <functional>
#include <string>

#include "core/metrics.h"

namespace voxserve::scheduler {

// One model's children of the families below; plain pointers into the registry, which outlives
// every scheduler. Null members are allowed (tests) and mean "not recorded".
struct ModelSchedulerMetrics {
  core::Gauge* queue_depth = nullptr;
  core::Histogram* queue_wait_seconds = nullptr;
  core::Histogram* batch_size = nullptr;
  core::Counter* dropped_expired = nullptr;
  core::Counter* dropped_cancelled = nullptr;
  core::Counter* synthesized = nullptr;  // segments that reached the engine
  core::Counter* engine_errors = nullptr;  // segments the engine failed
  core::Gauge* live_instances = nullptr;       // instances that may take a batch now
  core::Counter* instance_restarts = nullptr;  // worker processes started again after a loss
  core::Counter* requeued = nullptr;           // segments moved off a dead worker, unstarted
  // Seconds instance `index` spent running batches; may return null.
  std::function<core::Counter*(int index)> instance_busy_seconds;
};

class SchedulerMetricFamilies {
 public:
  explicit SchedulerMetricFamilies(core::MetricsRegistry& registry);
  ModelSchedulerMetrics ForModel(const std::string& model_id);

 private:
  core::Family<core::Gauge>& queue_depth_;
  core::Family<core::Histogram>& queue_wait_;
  core::Family<core::Histogram>& batch_size_;
  core::Family<core::Counter>& dropped_;
  core::Family<core::Counter>& synthesized_;
  core::Family<core::Counter>& engine_errors_;
  core::Family<core::Gauge>& live_instances_;
  core::Family<core::Counter>& restarts_;
  core::Family<core::Counter>& requeued_;
  core::Family<core::Counter>& busy_seconds_;
};

}  // namespace voxserve::scheduler
