#include "scheduler/scheduler_config.h"

#include "core/error.h"

namespace voxserve::scheduler {
namespace {

absl::Status CheckRange(const std::string& model_id, const char* key, int value, int min, int max) {
  if (value >= min && value <= max) return absl::OkStatus();
  return core::InvalidArgument("models[" + model_id + "]." + key + " = " + std::to_string(value) +
                               " is outside " + std::to_string(min) + ".." + std::to_string(max));
}

}  // namespace

absl::Status SchedulerConfig::Validate(const std::string& model_id) const {
  for (auto status : {CheckRange(model_id, "instances", instances, 1, 256),
                      CheckRange(model_id, "max_batch_size", max_batch_size, 1, 1024),
                      CheckRange(model_id, "max_queue_delay_ms", max_queue_delay_ms, 0, 10'000),
                      CheckRange(model_id, "queue_capacity", queue_capacity, 1, 1'000'000),
                      CheckRange(model_id, "first_segment_lead_ms", first_segment_lead_ms, 0,
                                 600'000)}) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace voxserve::scheduler
