#include "store/voice_store_metrics.h"

namespace voxserve::store {

VoiceStoreMetrics::VoiceStoreMetrics(core::MetricsRegistry& registry)
    : operation_seconds(registry.AddHistogram(
          "voxserve_voice_store_operation_seconds",
          "Time of one cloned-voice store operation (register, delete, load_profile, resync).",
          {"backend", "operation"}, core::LatencyBuckets())),
      errors(registry.AddCounter("voxserve_voice_store_errors_total",
                                 "Cloned-voice store operations that failed for the store's "
                                 "sake (unreachable, I/O), not the client's.",
                                 {"backend", "operation"})),
      profile_cache(registry.AddCounter(
          "voxserve_voice_profile_cache_total",
          "Cloned-voice profile lookups by synthesis, by result (hit: served from memory).",
          {"result"})),
      connected(registry.AddGauge("voxserve_voice_store_connected",
                                  "1 while the cloned-voice store can serve, 0 while it cannot "
                                  "(PostgreSQL unreachable).",
                                  {"backend"})),
      notifications(registry.AddCounter(
          "voxserve_voice_store_notifications_total",
          "Change notifications (PostgreSQL NOTIFY) from other replicas that caused a resync.",
          {"backend"})) {}

}  // namespace voxserve::store
