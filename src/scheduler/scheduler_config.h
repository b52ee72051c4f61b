// Scheduling settings of one model (YAML: models[].scheduling), validated with messages that name
// the key and the allowed range.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace voxserve::scheduler {

// Where a model's instances run. kThread: threads of the server sharing one engine (ONNX's
// default: its intra-op threads already use the cores). kProcess: one worker process per
// instance, each with its own engine (espeak-ng's default: it keeps global state, so only
// processes run it on several cores; a crashed worker is restarted alone).
enum class Isolation { kThread, kProcess };
std::string_view IsolationName(Isolation isolation);

// `instances: auto`: one instance per CPU the process may run on (per entry of `devices`, when
// devices are listed).
inline constexpr int kInstancesAuto = 0;
// The most instances a model may have (a number 1..kMaxInstances, or auto).
inline constexpr int kMaxInstances = 256;

struct SchedulerConfig {
  int instances = 1;            // instances driving the engine concurrently; kInstancesAuto = auto
  int max_batch_size = 1;       // capped by the engine's own maximum
  // Streaming engines: segments one instance advances together per step (what a batch is for
  // whole-segment engines); capped by the engine's own maximum. Ignored by other engines.
  int max_active = 8;
  int max_queue_delay_ms = 0;   // how long a partial batch may wait for company (Triton's knob)
  int queue_capacity = 64;      // queued segments before new requests are rejected with 429
  // How far ahead of earlier-queued later segments a request's first segment may jump. Bounds
  // the extra wait of any later segment, so no request starves.
  int first_segment_lead_ms = 2000;

  // Worker processes (isolation: process). Keys: scheduling.isolation, .devices, .cpus,
  // .batch_timeout_ms, .heartbeat_ms, .startup_timeout_ms.
  Isolation isolation = Isolation::kThread;
  // GPUs, one worker each: worker i runs with CUDA_VISIBLE_DEVICES=devices[i] (and the ONNX
  // CUDA provider's device 0). Empty = no GPU placement.
  std::vector<std::string> devices;
  // CPU affinity per worker as cpu lists ("0-3", "4,5"): one entry = every worker shares it;
  // several = worker i gets cpus[i % size]. Empty = no pinning.
  std::vector<std::string> cpus;
  // A batch (or one streaming step) running longer than this in a worker gets the worker killed
  // (watchdog).
  int batch_timeout_ms = 30'000;
  // An idle worker is pinged this often and must answer within the same time.
  int heartbeat_ms = 1'000;
  // Spawn, engine load and warm-up of one worker.
  int startup_timeout_ms = 60'000;
  // TEST ONLY, set from testing.fault_injection (never from a model's YAML): the worker obeys
  // fault texts (see server/worker_mode.h).
  bool worker_test_faults = false;

  absl::Status Validate(const std::string& model_id) const;
  // `instances` with auto resolved: devices.size() when devices are listed, else the CPUs this
  // process may use (threads: 1, since one engine is shared; ModelHost makes it one per CPU
  // for an engine whose calls run in parallel, ModelInfo::parallel_calls).
  int ResolvedInstances() const;
};

// CPUs in the process's affinity mask (at least 1).
int UsableCpus();

}  // namespace voxserve::scheduler
