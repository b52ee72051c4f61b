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
      connections_refused(
          registry.AddCounter("voxserve_http_connections_refused_total",
                              "Connections refused with 503 (or closed at once on a TLS port): "
                              "over max_connections.")
              .WithLabels({})),
      tls_failures(registry.AddCounter(
          "voxserve_tls_handshake_failures_total",
          "TLS connections that never got to HTTP, by reason: handshake (protocol version, "
          "certificate, timeout) or plain_http (plain HTTP sent to the TLS port).",
          {"reason"})) {}

}  // namespace voxserve::transport::http
