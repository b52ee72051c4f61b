#include "service/service_metrics.h"

namespace voxserve::service {

ServiceMetrics::ServiceMetrics(core::MetricsRegistry& registry)
    : in_flight(registry.AddGauge("voxserve_requests_in_flight",
                                  "Synthesis requests accepted and not yet finished.")
                    .WithLabels({})),
      paused(registry.AddGauge("voxserve_requests_paused",
                               "Streaming requests paused until their client reads (backpressure).")
                 .WithLabels({})),
      time_to_first_audio(registry.AddHistogram(
          "voxserve_time_to_first_audio_seconds",
          "From request arrival to its first encoded audio bytes.", {"model"},
          core::LatencyBuckets())),
      synthesis_duration(registry.AddHistogram("voxserve_synthesis_duration_seconds",
                                               "From request arrival to its last audio bytes.",
                                               {"model"}, core::LatencyBuckets())),
      real_time_factor(registry.AddHistogram(
          "voxserve_real_time_factor", "Synthesis time divided by audio duration (lower is faster).",
          {"model"}, {0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5})),
      audio_seconds(registry.AddCounter("voxserve_audio_seconds_total",
                                        "Seconds of audio produced.", {"model"})),
      characters(registry.AddCounter("voxserve_input_characters_total",
                                     "Characters of text synthesized.", {"model"})),
      rejected(registry.AddCounter("voxserve_requests_rejected_total",
                                   "Synthesis requests refused before any work, by reason.",
                                   {"model", "reason"})),
      failed(registry.AddCounter("voxserve_requests_failed_total",
                                 "Accepted synthesis requests that ended in an error.",
                                 {"model", "code"})) {}

}  // namespace voxserve::service
