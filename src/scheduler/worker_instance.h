// An engine instance in a worker process, seen from the parent: sends batches (or a streaming
// engine's steps) over the worker's socket and reads PCM back, with a watchdog on each batch
// (batch_timeout_ms) and on an idle heartbeat (heartbeat_ms). A worker that exits, hangs or breaks
// the protocol is killed and reaped at once; the instance is then not live until the scheduler
// calls Start() again.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "scheduler/engine_instance.h"
#include "scheduler/worker_protocol.h"

namespace voxserve::scheduler {

// A started worker: the parent's end of its socket (owned by the caller of Launch) and its pid.
struct WorkerConnection {
  int fd = -1;
  pid_t pid = 0;
};

// How workers come to be; the process launcher in production, a thread speaking the protocol
// in tests. Safe cross thread: each instance thread launches its own worker.
class WorkerLauncher {
 public:
  virtual ~WorkerLauncher() = default;
  virtual absl::StatusOr<WorkerConnection> Launch(int index) = 0;
  // Ends a launched worker: `kill` = SIGKILL now (hung or broken); else it was asked to exit
  // by closing its socket and gets a bounded moment before SIGKILL. Always reaps (no zombie).
  // The caller has closed `worker.fd` already.
  virtual void End(const WorkerConnection& worker, bool kill) = 0;
};

struct WorkerTimeouts {
  std::chrono::milliseconds startup{60'000};
  std::chrono::milliseconds batch{30'000};
  std::chrono::milliseconds heartbeat{1'000};          // idle time before a ping
  std::chrono::milliseconds heartbeat_answer{1'000};   // how long the pong may take
};

// Owned by one scheduler instance thread, which is the only caller of its methods.
class WorkerInstance : public EngineInstance {
 public:
  WorkerInstance(int index, std::shared_ptr<WorkerLauncher> launcher, WorkerTimeouts timeouts,
                 std::string model_id);
  ~WorkerInstance() override;

  bool Live() const override { return worker_.fd >= 0; }
  absl::Status Start() override;
  BatchOutcome Run(std::span<const engine::SegmentInput> batch) override;
  // Streaming: the worker's runner, over kBegin / kStep → kStepped / kRelease frames; each step
  // has the batch watchdog (batch_timeout_ms).
  absl::Status Begin(engine::SequenceId id, const engine::SegmentInput& input) override;
  StepOutcome Step() override;
  void Release(engine::SequenceId id) override;
  void Heartbeat() override;
  void Stop() override;

  pid_t pid() const { return worker_.pid; }

 private:
  // Closes the socket and ends the process; `why` is logged.
  void Lose(const std::string& why, bool kill);

  const int index_;
  const std::shared_ptr<WorkerLauncher> launcher_;
  const WorkerTimeouts timeouts_;
  const std::string model_id_;
  WorkerConnection worker_;
  std::chrono::steady_clock::time_point last_answer_;
  worker_protocol::FrameBuffer answer_;  // the worker's last answer, reused frame to frame
};

}  // namespace voxserve::scheduler
