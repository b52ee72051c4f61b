// Scheduling settings of one model (YAML: models[].scheduling), validated with messages that name
// the key and the allowed range.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace voxserve::scheduler {

struct SchedulerConfig {
  int instances = 1;            // worker threads driving the engine concurrently
  int max_batch_size = 1;       // capped by the engine's own maximum
  int max_queue_delay_ms = 0;   // how long a partial batch may wait for company (Triton's knob)
  int queue_capacity = 64;      // queued segments before new requests are rejected with 429
  // How far ahead of earlier-queued later segments a request's first segment may jump. Bounds
  // the extra wait of any later segment, so no request starves.
  int first_segment_lead_ms = 2000;

  absl::Status Validate(const std::string& model_id) const;
};

}  // namespace voxserve::scheduler
