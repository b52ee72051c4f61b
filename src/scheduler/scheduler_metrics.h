// The scheduler's metrics, registered once per process and labelled by model.
#pragma once

#include <functional>
#include <string>

#include "core/metrics.h"
#include "engine/streaming_engine.h"

namespace voxserve::scheduler {

// One streaming instance's runner figures (engine::StreamRunnerStats) as metrics, published by
// its step loop after each step: gauges set, totals turned into counter increments (a runner
// made again after a loss counts from 0, so a total below the last one starts over). Null
// members are not recorded.
class StreamInstanceMetrics {
 public:
  core::Gauge* decoding = nullptr;
  core::Gauge* prefill_waiting = nullptr;
  core::Gauge* vocoder_pending = nullptr;
  core::Counter* tokens = nullptr;
  core::Counter* vocoder_jobs = nullptr;
  core::Counter* vocoder_batched = nullptr;

  void Publish(const engine::StreamRunnerStats& stats);

 private:
  engine::StreamRunnerStats last_;
};

// One model's children of the families below; plain pointers into the registry, which outlives
// every scheduler. Null members are allowed (tests) and mean "not recorded".
struct ModelSchedulerMetrics {
  core::Gauge* queue_depth = nullptr;
  core::Histogram* queue_wait_seconds = nullptr;
  core::Histogram* batch_size = nullptr;
  core::Counter* dropped_expired = nullptr;
  core::Counter* dropped_cancelled = nullptr;
  core::Counter* synthesized = nullptr;        // segments that reached the engine
  core::Counter* engine_errors = nullptr;      // segments the engine failed
  core::Gauge* live_instances = nullptr;       // instances that may take a batch now
  core::Counter* instance_restarts = nullptr;  // worker processes started again after a loss
  core::Counter* requeued = nullptr;           // segments moved off a dead worker, unstarted
  // Seconds instance `index` spent running batches; may return null.
  std::function<core::Counter*(int index)> instance_busy_seconds;
  // Streaming engines: instance `index`'s runner figures; may be empty (not recorded).
  std::function<StreamInstanceMetrics(int index)> instance_stream;
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
  core::Family<core::Gauge>& stream_decoding_;
  core::Family<core::Gauge>& stream_prefill_waiting_;
  core::Family<core::Gauge>& stream_vocoder_pending_;
  core::Family<core::Counter>& stream_tokens_;
  core::Family<core::Counter>& stream_vocoder_jobs_;
  core::Family<core::Counter>& stream_vocoder_batched_;
};

}  // namespace voxserve::scheduler
