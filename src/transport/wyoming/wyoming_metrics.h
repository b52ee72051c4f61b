// Wyoming-level metrics: open and refused connections, events by direction and type, requests
// (a synthesize, or a synthesize-start ... synthesize-stopped stream) by how they ended.
// Request-level figures (time to first audio, failures by code, ...) are the service's, shared
// with every transport. Every label has a fixed set of values.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "core/metrics.h"

namespace voxserve::transport::wyoming {

// References into the registry, which outlives the server. Safe cross thread.
struct WyomingMetrics {
  explicit WyomingMetrics(core::MetricsRegistry& registry);

  // direction "in": the client's event types the server knows (describe, synthesize,
  // synthesize-start, synthesize-chunk, synthesize-stop, ping), "other" for any other type,
  // "invalid" for a malformed frame; "out": info, audio-start, audio-chunk, audio-stop,
  // synthesize-stopped, error, pong.
  void CountEvent(std::string_view direction, std::string_view type);
  // kind "synthesize" or "stream"; code "ok" or the status code in lower case
  // ("not_found", "resource_exhausted", "cancelled": the client left, ...).
  void CountRequest(std::string_view kind, const absl::Status& status);
  // reason "limit" (wyoming.max_connections) or "not_allowed" (wyoming.allow).
  void CountRefused(std::string_view reason);

  core::Gauge& connections;
  core::Family<core::Counter>& refused;   // labels: reason
  core::Family<core::Counter>& events;    // labels: direction, type
  core::Family<core::Counter>& requests;  // labels: kind, code
};

}  // namespace voxserve::transport::wyoming
