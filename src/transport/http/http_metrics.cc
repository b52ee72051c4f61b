#include "transport/http/http_metrics.h"

namespace voxserve::transport::http {

HttpMetrics::HttpMetrics(core::MetricsRegistry& registry)
    : requests(registry.AddCounter("voxserve_http_requests_total",
                                   "HTTP requests answered, by route and status code.",
                                   {"route", "code"})),
      duration(registry.AddHistogram("voxserve_http_request_duration_seconds",
                                     "From request read to response fully written, by route.",
                                     {"route"}, core::LatencyBuckets())),
      connections(registry.AddGauge("voxserve_http_connections", "Open HTTP connections.")
                      .WithLabels({})),
      connections_refused(registry.AddCounter("voxserve_http_connections_refused_total",
                                              "Connections closed at once: over max_connections.")
                              .WithLabels({})) {}

}  // namespace voxserve::transport::http
