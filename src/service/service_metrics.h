// Request-level metrics of the service, shared by every transport.
#pragma once

#include <string>

#include "core/metrics.h"

namespace voxserve::service {

// References into the registry, which outlives the service. Safe cross thread.
struct ServiceMetrics {
  explicit ServiceMetrics(core::MetricsRegistry& registry);

  core::Gauge& in_flight;
  core::Gauge& paused;  // streaming requests waiting for their client to read
  core::Family<core::Histogram>& time_to_first_audio;
  core::Family<core::Histogram>& synthesis_duration;
  core::Family<core::Histogram>& real_time_factor;
  core::Family<core::Counter>& audio_seconds;
  core::Family<core::Counter>& characters;
  core::Family<core::Counter>& rejected;  // labels: model, reason
  core::Family<core::Counter>& failed;    // labels: model, code
};

}  // namespace voxserve::service
