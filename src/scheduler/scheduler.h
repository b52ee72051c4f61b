// Per-model scheduler in the manner of Triton's dynamic batcher: one bounded queue, `instances`
// instance threads that each drive one EngineInstance (the shared engine in this process, or a
// worker process of its own), batches that leave when full or when their oldest
// segment has waited max_queue_delay_ms. Requests' first segments go ahead of later segments
// (time to first audio matters most) but only by a bounded lead, so nobody starves.
//
// For a streaming engine (engine/streaming_engine.h) each instance thread runs a step loop
// instead (step_loop.cc, vLLM's scheduler role): between steps it ends the active segments whose
// request was cancelled or expired (their slot is free for the next step), admits queued
// segments in the same priority order up to max_active, then runs one step and hands each
// chunk to its segment's on_chunk as it comes. Admission, 429 + Retry-After, priority, deadlines
// and drain mean the same for both kinds.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/pcm.h"
#include "core/request_context.h"
#include "engine/engine.h"
#include "scheduler/engine_instance.h"
#include "scheduler/scheduler_config.h"
#include "scheduler/scheduler_metrics.h"

namespace voxserve::scheduler {

struct SegmentTiming {
  core::Clock::time_point enqueued;
  core::Clock::time_point started;  // engine call began (== finished for dropped segments)
  core::Clock::time_point finished;
  int batch_size = 0;  // 0 when the segment never reached the engine
};

using SegmentDone =
    absl::AnyInvocable<void(absl::StatusOr<audio::PcmAudio> audio, const SegmentTiming& timing)>;
using SegmentChunk = absl::AnyInvocable<void(audio::PcmAudio chunk)>;

// One sentence of one request. Owned by the scheduler from a successful Submit until `done` has
// run; `done` runs exactly once, never under the scheduler's lock: on a worker thread, or on the
// thread that called SweepDeadSegments for a segment that call dropped.
// With `on_chunk` set, the segment's audio goes there chunk by chunk, in order, on the instance
// thread and before `done` (a streaming engine's chunks; a whole-segment engine's one result),
// and `done` then gets OK with an empty PcmAudio; without it, `done` gets the whole audio. After
// `done`, neither runs again.
struct SegmentTask {
  std::string text;
  std::string voice_id;
  double speed = 1.0;
  std::shared_ptr<const engine::VoiceProfile> voice_profile;  // a cloned voice's (SegmentInput)
  std::optional<uint64_t> seed;                               // SegmentInput::seed
  std::optional<engine::VoiceMode> voice_mode;                // SegmentInput::voice_mode
  std::string instructions;                                   // SegmentInput::instructions
  std::string phonemes;                                       // SegmentInput::phonemes
  double pitch = 1.0;                                         // SegmentInput::pitch
  bool first_of_request = true;
  // A later segment of a streamed response, once its first audio went out: when a client playing
  // at 1x from that first audio runs out (first audio + the audio made so far). The queue orders
  // it by that time instead of its arrival: a listener about to run dry goes ahead, one with
  // audio to spare lets newer requests pass for as long as its audio lasts.
  std::optional<core::Clock::time_point> listener_runs_out;
  core::Clock::time_point deadline = core::Clock::time_point::max();
  std::shared_ptr<const core::CancellationToken> cancellation;
  SegmentDone done;
  SegmentChunk on_chunk;  // optional
};

// Builds instance `index` (0-based) of a model; the scheduler owns what it returns.
using InstanceFactory = std::function<std::unique_ptr<EngineInstance>(int index)>;

class Scheduler {
 public:
  // Starts config.ResolvedInstances() instance threads. Without `instances`, each drives the
  // shared engine in this process; with it (worker processes), each owns the instance the
  // factory builds, and Create waits until every instance has made its first start (bounded by
  // startup_timeout_ms), failing when none came up. The engine supplies the model's facts
  // (batch limits) and must outlive nothing: the scheduler shares it.
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(std::shared_ptr<engine::Engine> engine,
                                                           const SchedulerConfig& config,
                                                           ModelSchedulerMetrics metrics,
                                                           InstanceFactory instances = {});
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

  // Ends the workers after their current batch (or step: active streaming segments end with
  // Unavailable too); queued segments end with Unavailable. Stop() returns at once (callable
  // from a segment's callback); Shutdown() also joins the workers (never call it from a worker).
  void Stop();
  void Shutdown();

  size_t QueueDepth() const;
  const SchedulerConfig& config() const { return config_; }
  // Instances configured, and those live now (a worker process that died or hung is not live
  // until restarted). Safe cross thread.
  int Instances() const { return static_cast<int>(instances_.size()); }
  int LiveInstances() const;
  // Worker restarts since start (a first start is not a restart).
  int Restarts() const;

 private:
  struct Queued {
    SegmentTask task;
    core::Clock::time_point enqueued;
    core::Clock::time_point priority;  // its key in the queue, kept for a requeue
  };
  // Ordered by priority time: arrival, moved earlier by first_segment_lead_ms for first segments;
  // a streamed response's later segment by when its listener runs out (listener_runs_out).
  using Queue = std::multimap<core::Clock::time_point, Queued>;

  Scheduler(std::shared_ptr<engine::Engine> engine, const SchedulerConfig& config,
            ModelSchedulerMetrics metrics);
  void InstanceLoop(int index);
  // Streaming engines' loop on instance `index` (step_loop.cc).
  void StepLoop(int index);
  // Requires `lock` held. Waits until the queue has work, heartbeating a supervised idle
  // instance; false when the caller should look at its state again (stopping, or lost).
  bool WaitForWork(int index, std::unique_lock<std::mutex>& lock);
  // Requires `lock` held; the thread is ending: what is queued ends (Draining) outside the
  // lock, then the instance stops.
  void EndOnStop(int index, std::unique_lock<std::mutex>& lock);
  // Requires mutex_: notes completions for the drain-rate estimate behind Retry-After.
  void NoteCompletions(size_t count, core::Clock::time_point when);
  // Brings a non-live instance up, after its backoff. Requires `lock` held; releases it while
  // starting. Returns false when the scheduler is stopping.
  bool Revive(int index, std::unique_lock<std::mutex>& lock);
  // The top of an instance thread's loop, with `lock` held: kStop when the scheduler is stopping
  // (or stopped while a dead instance was being revived), kAgain after a revival (look again),
  // kRun for a live instance. A dead instance takes no work: what is queued waits for a live one.
  enum class Turn { kStop, kAgain, kRun };
  Turn BeginTurn(int index, std::unique_lock<std::mutex>& lock);
  // Requires `lock` held; notes that instance `index` has gone from live to dead.
  void NoteLost(int index);
  // Puts segments that never ran back in the queue at their old places; requires mutex_. The
  // caller wakes the dispatchers.
  void RequeueLocked(std::vector<Queued>& segments);
  // Requires mutex_. Moves dead segments out of the queue into *dead.
  void TakeDeadSegments(core::Clock::time_point now, std::vector<Queued>* dead);
  // Requires mutex_ and a live head. The head segment and those that may share its batch, in
  // priority order; dead segments met on the way are moved into *dead.
  std::vector<Queue::iterator> CandidateBatch(core::Clock::time_point now,
                                              std::vector<Queued>* dead);
  // Runs the batch on instance `index`; a batch the instance never started is queued again.
  void RunBatch(int index, std::vector<Queued> batch);
  void EndDead(std::vector<Queued> dead);
  // Whether a segment's request has died: cancelled, or its deadline passed by `now`.
  static bool IsDead(const SegmentTask& task, core::Clock::time_point now);
  // Counts a segment whose request died and returns what it ends with: Cancelled, or
  // DeadlineExceeded saying `where` the deadline passed ("in the queue", "during synthesis").
  absl::Status DeathOf(const SegmentTask& task, std::string_view where);
  int RetryAfterSeconds(core::Clock::time_point now) const;  // requires mutex_

  const std::shared_ptr<engine::Engine> engine_;
  const SchedulerConfig config_;
  const int max_batch_size_;
  const bool streaming_;  // the engine is a streaming engine: instance threads run StepLoop
  const int max_active_;  // streaming: segments one instance advances together
  ModelSchedulerMetrics metrics_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  Queue queue_;                                             // guarded by mutex_
  bool stopping_ = false;                                   // guarded by mutex_
  std::deque<core::Clock::time_point> recent_completions_;  // guarded by mutex_; drain-rate window

  // Per instance, index-aligned. Each thread is the only user of its instance; the state below
  // is guarded by mutex_.
  struct InstanceState {
    bool live = false;
    bool tried = false;  // its first start has been attempted
    int failures = 0;    // starts failed or workers lost since the last good batch
    core::Clock::time_point retry_at{};
  };
  std::vector<std::unique_ptr<EngineInstance>> instances_;
  std::vector<InstanceState> states_;         // guarded by mutex_
  std::vector<core::Counter*> busy_seconds_;  // per instance; null = not recorded
  int live_ = 0;                              // guarded by mutex_
  int restarts_ = 0;                          // guarded by mutex_
  bool supervised_ = false;  // instances may die (worker processes): heartbeats and restarts
  std::condition_variable first_starts_;  // an instance finished its first start attempt
  std::vector<std::thread> threads_;
};

}  // namespace voxserve::scheduler
