// Per-model scheduler in the manner of Triton's dynamic batcher: one bounded queue, `instances`
// worker threads that each drive the engine, batches that leave when full or when their oldest
// segment has waited max_queue_delay_ms. Requests' first segments go ahead of later segments
// (time to first audio matters most) but only by a bounded lead, so nobody starves.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/pcm.h"
#include "core/request_context.h"
#include "engine/engine.h"
#include "scheduler/scheduler_config.h"
#include "scheduler/scheduler_metrics.h"

namespace voxserve::scheduler {

struct SegmentTiming {
  core::Clock::time_point enqueued;
  core::Clock::time_point started;   // engine call began (== finished for dropped segments)
  core::Clock::time_point finished;
  int batch_size = 0;                // 0 when the segment never reached the engine
};

using SegmentDone =
    absl::AnyInvocable<void(absl::StatusOr<audio::PcmAudio> audio, const SegmentTiming& timing)>;

// One sentence of one request. Owned by the scheduler from a successful Submit until `done` has
// run; `done` runs exactly once, never under the scheduler's lock: on a worker thread, or on the
// thread that called SweepDeadSegments for a segment that call dropped.
struct SegmentTask {
  std::string text;
  std::string voice_id;
  double speed = 1.0;
  bool first_of_request = true;
  core::Clock::time_point deadline = core::Clock::time_point::max();
  std::shared_ptr<const core::CancellationToken> cancellation;
  SegmentDone done;
};

class Scheduler {
 public:
  // Starts config.instances workers. The engine must outlive nothing: the scheduler shares it.
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(std::shared_ptr<engine::Engine> engine,
                                                           const SchedulerConfig& config,
                                                           ModelSchedulerMetrics metrics);
  // Stops the workers; queued segments end with Unavailable.
  ~Scheduler();

  // Safe cross thread. A request's first segment is admitted only while fewer than
  // queue_capacity segments wait (else QueueFull with a Retry-After estimated from the measured
  // drain rate); later segments of admitted requests are always queued, so a stream that has
  // started is never cut by admission control. On error the task is not taken and `done` will
  // not run. After Stop(), every Submit fails with Unavailable.
  absl::Status Submit(SegmentTask task);

  // Drops queued segments whose request was cancelled or expired and runs their `done` on the
  // calling thread (outside the lock), so their requests end now rather than when a worker
  // is free and the queue reaches them. Safe cross thread; never call it holding a lock that a
  // `done` takes.
  void SweepDeadSegments();

  // Ends the workers after their current batch; queued segments end with Unavailable. Stop()
  // returns at once (callable from a segment's callback); Shutdown() also joins the workers
  // (never call it from a worker).
  void Stop();
  void Shutdown();

  size_t QueueDepth() const;
  const SchedulerConfig& config() const { return config_; }

 private:
  struct Queued {
    SegmentTask task;
    core::Clock::time_point enqueued;
  };
  // Ordered by priority time: arrival, moved earlier by first_segment_lead_ms for first segments.
  using Queue = std::multimap<core::Clock::time_point, Queued>;

  Scheduler(std::shared_ptr<engine::Engine> engine, const SchedulerConfig& config,
            ModelSchedulerMetrics metrics);
  void WorkerLoop();
  // Requires mutex_. Moves dead segments out of the queue into *dead.
  void TakeDeadSegments(core::Clock::time_point now, std::vector<Queued>* dead);
  // Requires mutex_ and a live head. The head segment and those that may share its batch, in
  // priority order; dead segments met on the way are moved into *dead.
  std::vector<Queue::iterator> CandidateBatch(core::Clock::time_point now,
                                              std::vector<Queued>* dead);
  void RunBatch(std::vector<Queued> batch);
  void EndDead(std::vector<Queued> dead);
  int RetryAfterSeconds(core::Clock::time_point now) const;  // requires mutex_

  const std::shared_ptr<engine::Engine> engine_;
  const SchedulerConfig config_;
  const int max_batch_size_;
  ModelSchedulerMetrics metrics_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  Queue queue_;                                   // guarded by mutex_
  bool stopping_ = false;                         // guarded by mutex_
  std::deque<core::Clock::time_point> recent_completions_;  // guarded by mutex_; drain-rate window
  std::vector<std::thread> workers_;
};

}  // namespace voxserve::scheduler
