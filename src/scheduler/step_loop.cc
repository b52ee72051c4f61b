// The scheduler's step loop for streaming engines (scheduler.h): one per instance thread.
#include <map>

#include "core/error.h"
#include "scheduler/scheduler.h"

namespace voxserve::scheduler {
namespace {

// Retry-After for segments lost with their worker (as worker_instance.cc's batches).
constexpr int kLostRetryAfterSeconds = 1;

}  // namespace

void Scheduler::StepLoop(int index) {
  EngineInstance& instance = *instances_[index];
  // One segment being generated on this instance; only this thread touches it.
  struct Active {
    Queued queued;
    core::Clock::time_point started;
    int joined_with = 0;        // active segments when it joined (its "batch size")
    audio::PcmAudio collected;  // its audio so far, for a task without on_chunk
  };
  // Keyed by sequence id, which grows, so iteration is join order.
  std::map<engine::SequenceId, Active> active;
  engine::SequenceId next_id = 1;
  StreamInstanceMetrics stream_metrics =
      metrics_.instance_stream ? metrics_.instance_stream(index) : StreamInstanceMetrics{};
  size_t completed = 0;  // ended since the last look under the lock (drain-rate estimate)

  // Ends an active segment (outside the lock). Its id must already be out of the runner.
  auto end_active = [&](Active& segment, absl::Status status) {
    core::Clock::time_point now = core::Clock::now();
    SegmentTiming timing{segment.queued.enqueued, segment.started, now, segment.joined_with};
    if (!status.ok()) {
      if (metrics_.engine_errors && status.code() != absl::StatusCode::kCancelled &&
          status.code() != absl::StatusCode::kDeadlineExceeded) {
        metrics_.engine_errors->Increment();
      }
      segment.queued.task.done(std::move(status), timing);
      return;
    }
    ++completed;
    if (metrics_.synthesized) metrics_.synthesized->Increment();
    segment.queued.task.done(std::move(segment.collected), timing);
  };

  std::unique_lock lock(mutex_);
  while (true) {
    // A lost instance's segments have ended already (BeginTurn revives it).
    const Turn turn = BeginTurn(index, lock);
    if (turn == Turn::kStop) break;
    if (turn == Turn::kAgain || (active.empty() && !WaitForWork(index, lock))) continue;

    // Between steps. Leaves first, so a slot freed by a cancellation is taken at this very step.
    core::Clock::time_point now = core::Clock::now();
    std::vector<engine::SequenceId> leaving;
    for (auto& [id, segment] : active) {
      if (IsDead(segment.queued.task, now)) leaving.push_back(id);
    }
    std::vector<Queued> dead;
    std::vector<Queued> joining;
    const size_t slots = static_cast<size_t>(max_active_) - (active.size() - leaving.size());
    while (joining.size() < slots && !queue_.empty()) {
      auto head = queue_.begin();  // priority order: first segments ahead, by a bounded lead
      (IsDead(head->second.task, now) ? dead : joining).push_back(std::move(head->second));
      queue_.erase(head);
    }
    if (metrics_.queue_depth) metrics_.queue_depth->Set(static_cast<double>(queue_.size()));
    lock.unlock();

    EndDead(std::move(dead));
    for (engine::SequenceId id : leaving) {
      instance.Release(id);
      auto it = active.find(id);
      end_active(it->second, DeathOf(it->second.queued.task, "during synthesis"));
      active.erase(it);
    }
    std::vector<Queued> requeue;  // joined an instance that turned out lost: never started
    for (Queued& queued : joining) {
      if (!instance.Live()) {
        requeue.push_back(std::move(queued));
        continue;
      }
      engine::SequenceId id = next_id++;
      const SegmentTask& task = queued.task;
      absl::Status begun =
          instance.Begin(id, {task.text, task.voice_id, task.speed, task.voice_profile, task.seed,
                              task.voice_mode, task.instructions, task.phonemes, task.pitch});
      if (begun.ok()) {
        if (metrics_.queue_wait_seconds) {
          metrics_.queue_wait_seconds->Observe(
              std::chrono::duration<double>(core::Clock::now() - queued.enqueued).count());
        }
        Active segment{std::move(queued), core::Clock::now(), 0, {}};
        segment.joined_with = static_cast<int>(active.size()) + 1;
        active.emplace(id, std::move(segment));
      } else if (!instance.Live()) {
        requeue.push_back(std::move(queued));
      } else {
        Active segment{std::move(queued), core::Clock::now(), 0, {}};
        end_active(segment, begun);
      }
    }

    absl::Status lost;
    if (instance.Live() && !active.empty()) {
      core::Clock::time_point started = core::Clock::now();
      StepOutcome outcome = instance.Step();
      core::Clock::time_point finished = core::Clock::now();
      if (core::Counter* busy = busy_seconds_[index]) {
        busy->Increment(std::chrono::duration<double>(finished - started).count());
      }
      if (metrics_.batch_size) metrics_.batch_size->Observe(static_cast<double>(active.size()));
      stream_metrics.Publish(outcome.stats);
      for (engine::SequenceStep& step : outcome.steps) {
        auto it = active.find(step.id);
        if (it == active.end()) continue;  // released before this step; nothing more of it
        Active& segment = it->second;
        if (IsDead(segment.queued.task, finished)) {
          // Died during the step: no further chunks, its slot is free for the next step.
          if (!step.end) instance.Release(step.id);
          end_active(segment, DeathOf(segment.queued.task, "during synthesis"));
          active.erase(it);
          continue;
        }
        if (!step.chunk.samples.empty() || !step.chunk.words.empty()) {
          if (segment.queued.task.on_chunk) {
            if (segment.collected.sample_rate == 0) {
              segment.collected.sample_rate = step.chunk.sample_rate;
            }
            segment.queued.task.on_chunk(std::move(step.chunk));
          } else {
            audio::AppendChunk(segment.collected, std::move(step.chunk));
          }
        }
        if (step.end) {
          end_active(segment, *std::move(step.end));
          active.erase(it);
        }
      }
      lost = outcome.lost;
    }
    if (!instance.Live() && lost.ok() && !active.empty()) {
      lost = core::InstanceLost(
          "engine worker of model " + engine_->info().id + " was lost during synthesis; retry",
          kLostRetryAfterSeconds);
    }
    if (!instance.Live()) {
      // Counted before any segment hears of it, as RunBatch does.
      std::lock_guard guard(mutex_);
      NoteLost(index);
    }
    if (!lost.ok()) {
      // Every segment still active on the instance ends with the loss, exactly once.
      for (auto& [id, segment] : active) {
        instance.Release(id);
        end_active(segment, lost);
      }
      active.clear();
    }

    lock.lock();
    if (!requeue.empty()) {
      RequeueLocked(requeue);
      wake_.notify_all();
    }
    if (instance.Live() && completed > 0) states_[index].failures = 0;
    NoteCompletions(completed, core::Clock::now());
    completed = 0;
  }
  // Stopping: the active segments end now (Draining), not after their last step; a server's
  // graceful drain waits for its requests before it stops the scheduler.
  lock.unlock();
  for (auto& [id, segment] : active) {
    instance.Release(id);
    end_active(segment, core::Draining("server is shutting down"));
  }
  active.clear();
  lock.lock();
  EndOnStop(index, lock);
}

}  // namespace voxserve::scheduler
