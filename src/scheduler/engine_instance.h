// One engine instance as the scheduler drives it: a thread of this process sharing the engine
// (InProcessInstance) or a proxy for a worker process (WorkerInstance, worker_instance.h). Each
// scheduler instance thread owns one EngineInstance and is the only caller of its methods.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/pcm.h"
#include "engine/engine.h"

namespace voxserve::scheduler {

struct BatchOutcome {
  // True when no segment of the batch reached an engine (the worker was found dead before it
  // took the batch): the scheduler queues them again for a live instance. `results` is empty.
  bool not_started = false;
  std::vector<absl::StatusOr<audio::PcmAudio>> results;  // one per input otherwise
};

class EngineInstance {
 public:
  virtual ~EngineInstance() = default;

  // Live: may take a batch now. A process instance is not live before Start() succeeded and
  // after its worker died, hung or broke the protocol.
  virtual bool Live() const = 0;
  // Brings a non-live instance up (spawn, load, warm up, READY). Blocking, bounded by the
  // configured startup timeout.
  virtual absl::Status Start() = 0;
  // Runs one batch; never throws. A worker lost mid-batch ends its segments with a retriable
  // Unavailable and leaves the instance not live.
  virtual BatchOutcome Run(std::span<const engine::SegmentInput> batch) = 0;
  // Called while idle, at most every heartbeat interval: checks the instance still answers.
  // Leaves it not live when it does not.
  virtual void Heartbeat() = 0;
  // Ends the instance for good (a worker process: closed, given a moment to exit, killed, reaped).
  virtual void Stop() = 0;
};

// Today's instance: the shared engine called on the scheduler's thread.
class InProcessInstance : public EngineInstance {
 public:
  explicit InProcessInstance(std::shared_ptr<engine::Engine> engine) : engine_(std::move(engine)) {}
  bool Live() const override { return true; }
  absl::Status Start() override { return absl::OkStatus(); }
  BatchOutcome Run(std::span<const engine::SegmentInput> batch) override;
  void Heartbeat() override {}
  void Stop() override {}

 private:
  std::shared_ptr<engine::Engine> engine_;
};

}  // namespace voxserve::scheduler
