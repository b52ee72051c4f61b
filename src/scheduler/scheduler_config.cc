#include "scheduler/scheduler_config.h"

#include <sched.h>

#include "core/error.h"

namespace voxserve::scheduler {
namespace {

absl::Status CheckRange(const std::string& model_id, const char* key, int value, int min, int max) {
  if (value >= min && value <= max) return absl::OkStatus();
  return core::InvalidArgument("models[" + model_id + "]." + key + " = " + std::to_string(value) +
                               " is outside " + std::to_string(min) + ".." + std::to_string(max));
}

}  // namespace

std::string_view IsolationName(Isolation isolation) {
  return isolation == Isolation::kProcess ? "process" : "thread";
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

int SchedulerConfig::ResolvedInstances() const {
  if (instances != kInstancesAuto) return instances;
  if (!devices.empty()) return static_cast<int>(devices.size());
  return isolation == Isolation::kProcess ? UsableCpus() : 1;
}

absl::Status SchedulerConfig::Validate(const std::string& model_id) const {
  if (instances != kInstancesAuto && (instances < 1 || instances > kMaxInstances)) {
    return core::InvalidArgument("models[" + model_id +
                                 "].instances = " + std::to_string(instances) + " is outside 1.." +
                                 std::to_string(kMaxInstances) + " (or auto)");
  }
  for (auto status :
       {CheckRange(model_id, "max_batch_size", max_batch_size, 1, 1024),
        CheckRange(model_id, "max_active", max_active, 1, 1024),
        CheckRange(model_id, "max_queue_delay_ms", max_queue_delay_ms, 0, 10'000),
        CheckRange(model_id, "queue_capacity", queue_capacity, 1, 1'000'000),
        CheckRange(model_id, "first_segment_lead_ms", first_segment_lead_ms, 0, 600'000),
        CheckRange(model_id, "batch_timeout_ms", batch_timeout_ms, 10, 3'600'000),
        CheckRange(model_id, "heartbeat_ms", heartbeat_ms, 10, 600'000),
        CheckRange(model_id, "startup_timeout_ms", startup_timeout_ms, 100, 3'600'000)}) {
    if (!status.ok()) return status;
  }
  if (isolation == Isolation::kThread && (!devices.empty() || !cpus.empty())) {
    return core::InvalidArgument("models[" + model_id +
                                 "].scheduling: devices and cpus need isolation: process");
  }
  if (!devices.empty() && instances != kInstancesAuto &&
      instances != static_cast<int>(devices.size())) {
    return core::InvalidArgument("models[" + model_id + "].scheduling.instances = " +
                                 std::to_string(instances) + " but " +
                                 std::to_string(devices.size()) +
                                 " devices are listed (one worker per device; use auto)");
  }
  return absl::OkStatus();
}

}  // namespace voxserve::scheduler
