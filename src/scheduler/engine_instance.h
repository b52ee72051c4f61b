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
#include "engine/streaming_engine.h"

namespace voxserve::scheduler {

struct BatchOutcome {
  // True when no segment of the batch reached an engine (the worker was found dead before it
  // took the batch): the scheduler queues them again for a live instance. `results` is empty.
  bool not_started = false;
  std::vector<absl::StatusOr<audio::PcmAudio>> results;  // one per input otherwise
};

// What one step of a streaming instance produced (see engine::StreamRunner::Step).
struct StepOutcome {
  std::vector<engine::SequenceStep> steps;
  // Not OK when the instance was lost during the step (a worker died, hung or broke the
  // protocol): every sequence still active on it ends with this (retriable) status.
  absl::Status lost;
  engine::StreamRunnerStats stats;  // the runner's figures after the step (zero when lost)
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
  // Streaming engines (engine/streaming_engine.h), in the runner's terms. Begin: an error with
  // Live() still true ends that segment only; with Live() false the instance was lost and the
  // segment never started. Release never fails (a lost instance has forgotten it anyway).
  // The defaults are those of an instance of a whole-segment engine, which has no runner.
  virtual absl::Status Begin(engine::SequenceId /*id*/, const engine::SegmentInput& /*input*/) {
    return absl::UnimplementedError("this engine instance has no streaming runner");
  }
  virtual StepOutcome Step() { return {}; }
  virtual void Release(engine::SequenceId /*id*/) {}
  // Called while idle, at most every heartbeat interval: checks the instance still answers.
  // Leaves it not live when it does not.
  virtual void Heartbeat() = 0;
  // Ends the instance for good (a worker process: closed, given a moment to exit, killed, reaped).
  virtual void Stop() = 0;
};

// Today's instance: the shared engine called on the scheduler's thread. For a streaming engine
// it owns this instance's runner (created by Start, on the instance thread).
class InProcessInstance : public EngineInstance {
 public:
  explicit InProcessInstance(std::shared_ptr<engine::Engine> engine) : engine_(std::move(engine)) {}
  bool Live() const override { return true; }
  absl::Status Start() override;
  BatchOutcome Run(std::span<const engine::SegmentInput> batch) override;
  absl::Status Begin(engine::SequenceId id, const engine::SegmentInput& input) override;
  StepOutcome Step() override;
  void Release(engine::SequenceId id) override;
  void Heartbeat() override {}
  void Stop() override { runner_.reset(); }

 private:
  std::shared_ptr<engine::Engine> engine_;
  std::unique_ptr<engine::StreamRunner> runner_;  // streaming engines only
};

}  // namespace voxserve::scheduler
