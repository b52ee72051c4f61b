// Metrics of the cloned-voice store, whichever its backend (docs/operations.md "Metrics").
#pragma once

#include "core/metrics.h"

namespace voxserve::store {

// References into the registry, which outlives the store. Safe cross thread.
struct VoiceStoreMetrics {
  explicit VoiceStoreMetrics(core::MetricsRegistry& registry);

  // labels: backend, operation (register, delete, load_profile, resync)
  core::Family<core::Histogram>& operation_seconds;
  core::Family<core::Counter>& errors;         // labels: backend, operation
  core::Family<core::Counter>& profile_cache;  // labels: result (hit, miss)
  core::Family<core::Gauge>& connected;        // labels: backend; 1 while it can serve
  core::Family<core::Counter>& notifications;  // labels: backend; NOTIFYs that caused a resync
};

}  // namespace voxserve::store
