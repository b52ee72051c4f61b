// HTTP-level metrics: requests by route and status code, latency by route, open connections,
// refused connections and failed TLS handshakes.
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
  core::Family<core::Counter>& tls_failures;  // labels: reason (handshake, plain_http)
};

}  // namespace voxserve::transport::http
