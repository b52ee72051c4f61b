// Starts worker processes: the running binary again (/proc/self/exe, no second executable) in
// its hidden worker mode, one model's engine each (see server/worker_mode.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/logging.h"
#include "engine/engine_factory.h"
#include "scheduler/scheduler_config.h"
#include "scheduler/worker_instance.h"

namespace voxserve::scheduler {

// What a worker needs to build its engine: the model's spec and warm-up texts, plus placement.
struct WorkerSpec {
  engine::EngineSpec engine;
  std::vector<std::string> warmup;
  std::string cpus;           // affinity as a cpu list ("0-3"); empty = inherit
  bool test_faults = false;   // TEST ONLY: see server/worker_mode.h
  core::LoggingSettings log;  // the server's: a worker's lines go to the same log, alike
};

// The worker's command line carries the spec as JSON (--worker-spec).
std::string EncodeWorkerSpec(const WorkerSpec& spec);
absl::StatusOr<WorkerSpec> DecodeWorkerSpec(const std::string& json);

// Parses a Linux cpu list ("0-3,8,10-11") into CPU numbers; InvalidArgument names the problem.
absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& list);

// Worker i gets: the server's log level and format (core::CurrentLogging);
// CUDA_VISIBLE_DEVICES=devices[i % size] when devices are listed (and, for the ONNX engines,
// cuda_device_id 0); affinity cpus[i % size] when cpus are listed; for the ONNX engines (not espeak
// or tone), intra_op_threads = max(1, cores / workers sharing them) unless the model's options set
// it, where cores are the worker's own cpus entry or the usable CPUs. Spawned with posix_spawn
// (safe in a threaded process), signals unblocked and default, in a process group of its own (a
// terminal's Ctrl-C reaches only the server, which drains first). The worker sets PR_SET_PDEATHSIG
// itself and checks its parent is still the pid it was given. That signal fires when the spawning
// *thread* ends: each worker is spawned (and respawned) by its scheduler instance thread, which
// ends only after it has stopped and reaped the worker.
class ProcessLauncher : public WorkerLauncher {
 public:
  ProcessLauncher(WorkerSpec spec, const SchedulerConfig& config, int workers);
  absl::StatusOr<WorkerConnection> Launch(int index) override;
  void End(const WorkerConnection& worker, bool kill) override;

  // Worker `index`'s spec with its placement applied (the rules above); CUDA_VISIBLE_DEVICES is
  // set in its environment by Launch.
  WorkerSpec SpecFor(int index) const;

 private:
  const WorkerSpec spec_;
  const SchedulerConfig config_;
  const int workers_;
};

// Instances for Scheduler::Create: worker i is a WorkerInstance over a ProcessLauncher.
std::function<std::unique_ptr<EngineInstance>(int index)> WorkerProcessInstances(
    WorkerSpec spec, const SchedulerConfig& config);

// The descriptor number the worker finds its socket on.
inline constexpr int kWorkerSocketFd = 3;

}  // namespace voxserve::scheduler
