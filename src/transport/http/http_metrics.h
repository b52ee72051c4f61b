// HTTP-level metrics: requests by route and status code, latency by route, open connections.
#pragma once

#include "core/metrics.h"

namespace voxserve::transport::http {

// References into the registry, which outlives the server. Safe cross thread.
struct HttpMetrics {
  explicit HttpMetrics(core::MetricsRegistry& registry);

  core::Family<core::Counter>& requests;    // labels: route, code
  core::Family<core::Histogram>& duration;  // labels: route
  core::Gauge& connections;
  core::Counter& connections_refused;
};

}  // namespace voxserve::transport::http
