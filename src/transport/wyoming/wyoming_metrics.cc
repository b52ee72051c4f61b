#include "transport/wyoming/wyoming_metrics.h"

#include <string>

#include "absl/strings/ascii.h"

namespace voxserve::transport::wyoming {

WyomingMetrics::WyomingMetrics(core::MetricsRegistry& registry)
    : connections(registry.AddGauge("voxserve_wyoming_connections", "Open Wyoming connections.")
                      .WithLabels({})),
      refused(registry.AddCounter(
          "voxserve_wyoming_connections_refused_total",
          "Wyoming connections closed at once, by reason: limit (wyoming.max_connections) or "
          "not_allowed (the client is not in wyoming.allow).",
          {"reason"})),
      events(registry.AddCounter(
          "voxserve_wyoming_events_total",
          "Wyoming events by direction (in, out) and type (describe, synthesize, "
          "synthesize-start, synthesize-chunk, synthesize-stop, ping, other, invalid; info, "
          "audio-start, audio-chunk, audio-stop, synthesize-stopped, error, pong).",
          {"direction", "type"})),
      requests(registry.AddCounter(
          "voxserve_wyoming_requests_total",
          "Wyoming requests ended, by kind (synthesize, stream) and code (ok, or the status code "
          "in lower case: not_found, invalid_argument, resource_exhausted, cancelled, ...).",
          {"kind", "code"})) {}

void WyomingMetrics::CountEvent(std::string_view direction, std::string_view type) {
  events.WithLabels({std::string(direction), std::string(type)}).Increment();
}

void WyomingMetrics::CountRequest(std::string_view kind, const absl::Status& status) {
  requests
      .WithLabels(
          {std::string(kind), absl::AsciiStrToLower(absl::StatusCodeToString(status.code()))})
      .Increment();
}

void WyomingMetrics::CountRefused(std::string_view reason) {
  refused.WithLabels({std::string(reason)}).Increment();
}

}  // namespace voxserve::transport::wyoming
