#include "scheduler/scheduler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace voxserve::scheduler {
namespace {

// How many queued entries one batch formation looks at, at most: keeps dispatch cost flat when
// the queue is long and the head's voice is rare. Batches form from the front of the queue.
constexpr size_t kMaxScan = 256;
// Completions remembered for the drain-rate estimate behind Retry-After.
constexpr size_t kDrainWindow = 128;
constexpr int kMaxRetryAfterSeconds = 60;

bool IsDead(const SegmentTask& task, core::Clock::time_point now) {
  return now >= task.deadline || (task.cancellation && task.cancellation->IsCancelled());
}

}  // namespace

Scheduler::Scheduler(std::shared_ptr<engine::Engine> engine, const SchedulerConfig& config,
                     ModelSchedulerMetrics metrics)
    : engine_(std::move(engine)),
      config_(config),
      max_batch_size_(std::max(1, std::min(config.max_batch_size, engine_->info().max_batch_size))),
      metrics_(metrics) {}

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(std::shared_ptr<engine::Engine> engine,
                                                             const SchedulerConfig& config,
                                                             ModelSchedulerMetrics metrics) {
  if (auto status = config.Validate(engine->info().id); !status.ok()) return status;
  std::unique_ptr<Scheduler> scheduler(new Scheduler(std::move(engine), config, metrics));
  for (int i = 0; i < config.instances; ++i) {
    scheduler->workers_.emplace_back([raw = scheduler.get()] { raw->WorkerLoop(); });
  }
  return scheduler;
}

Scheduler::~Scheduler() { Shutdown(); }

void Scheduler::Shutdown() {
  Stop();
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
}

void Scheduler::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

size_t Scheduler::QueueDepth() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

absl::Status Scheduler::Submit(SegmentTask task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return core::Draining("model " + engine_->info().id + " is shutting down");
    core::Clock::time_point now = core::Clock::now();
    if (task.first_of_request && queue_.size() >= static_cast<size_t>(config_.queue_capacity)) {
      // Later segments of accepted requests may queue past the capacity (they are never
      // refused), so the queue can hold more than the limit that refuses new requests.
      return core::QueueFull(
          "model " + engine_->info().id + " is at capacity: its queue holds " +
              std::to_string(queue_.size()) + " segments and admits new requests below " +
              std::to_string(config_.queue_capacity) + " (scheduling.queue_capacity)",
          RetryAfterSeconds(now));
    }
    core::Clock::time_point priority = now;
    if (task.first_of_request) priority -= std::chrono::milliseconds(config_.first_segment_lead_ms);
    queue_.emplace(priority, Queued{std::move(task), now});
    if (metrics_.queue_depth) metrics_.queue_depth->Set(static_cast<double>(queue_.size()));
  }
  wake_.notify_one();
  return absl::OkStatus();
}

void Scheduler::SweepDeadSegments() {
  std::vector<Queued> dead;
  {
    std::lock_guard lock(mutex_);
    TakeDeadSegments(core::Clock::now(), &dead);
    if (dead.empty()) return;
    if (metrics_.queue_depth) metrics_.queue_depth->Set(static_cast<double>(queue_.size()));
  }
  // The caller ends them, not a worker: every worker may be inside the engine for a while, and
  // the point of sweeping is that these requests end (and free queue capacity) now. A removed
  // head may also change which batch is due, so waiting workers look again.
  wake_.notify_all();
  EndDead(std::move(dead));
}

void Scheduler::TakeDeadSegments(core::Clock::time_point now, std::vector<Queued>* dead) {
  for (auto it = queue_.begin(); it != queue_.end();) {
    if (IsDead(it->second.task, now)) {
      dead->push_back(std::move(it->second));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<Scheduler::Queue::iterator> Scheduler::CandidateBatch(core::Clock::time_point now,
                                                                  std::vector<Queued>* dead) {
  std::vector<Queue::iterator> batch;
  auto head = queue_.begin();
  batch.push_back(head);
  const bool same_voice = engine_->info().batch_requires_same_voice;
  size_t scanned = 1;
  for (auto it = std::next(head); it != queue_.end() && scanned < kMaxScan &&
                                  batch.size() < static_cast<size_t>(max_batch_size_);
       ++scanned) {
    if (IsDead(it->second.task, now)) {
      // Only the head was checked before; a dead segment behind it must not ride along.
      dead->push_back(std::move(it->second));
      it = queue_.erase(it);
      continue;
    }
    if (!same_voice || it->second.task.voice_id == head->second.task.voice_id) batch.push_back(it);
    ++it;
  }
  return batch;
}

void Scheduler::WorkerLoop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) break;

    core::Clock::time_point now = core::Clock::now();
    std::vector<Queued> dead;
    // Dead segments at the front never reach the engine.
    while (!queue_.empty() && IsDead(queue_.begin()->second.task, now)) {
      dead.push_back(std::move(queue_.begin()->second));
      queue_.erase(queue_.begin());
    }
    std::vector<Queue::iterator> candidates;
    if (!queue_.empty()) candidates = CandidateBatch(now, &dead);
    if (!dead.empty() || queue_.empty()) {
      // End them outside the lock, then form the batch again from what is left.
      if (metrics_.queue_depth) metrics_.queue_depth->Set(static_cast<double>(queue_.size()));
      lock.unlock();
      EndDead(std::move(dead));
      lock.lock();
      continue;
    }

    if (candidates.size() < static_cast<size_t>(max_batch_size_) && config_.max_queue_delay_ms > 0) {
      core::Clock::time_point oldest = candidates.front()->second.enqueued;
      for (auto it : candidates) oldest = std::min(oldest, it->second.enqueued);
      core::Clock::time_point due = oldest + std::chrono::milliseconds(config_.max_queue_delay_ms);
      if (now < due) {
        // Wait for company or for the delay to run out, then form the batch again.
        wake_.wait_until(lock, due);
        continue;
      }
    }

    std::vector<Queued> batch;
    batch.reserve(candidates.size());
    for (auto it : candidates) {
      batch.push_back(std::move(it->second));
      queue_.erase(it);
    }
    if (metrics_.queue_depth) metrics_.queue_depth->Set(static_cast<double>(queue_.size()));
    size_t batch_size = batch.size();
    lock.unlock();
    RunBatch(std::move(batch));
    lock.lock();
    core::Clock::time_point finished = core::Clock::now();
    for (size_t i = 0; i < batch_size; ++i) {
      recent_completions_.push_back(finished);
      if (recent_completions_.size() > kDrainWindow) recent_completions_.pop_front();
    }
  }
  // Stopping: whatever is still queued ends here, outside the lock.
  std::vector<Queued> remaining;
  for (auto& [priority, queued] : queue_) remaining.push_back(std::move(queued));
  queue_.clear();
  if (metrics_.queue_depth) metrics_.queue_depth->Set(0);
  lock.unlock();
  for (Queued& queued : remaining) {
    core::Clock::time_point now = core::Clock::now();
    queued.task.done(core::Draining("server is shutting down"), {queued.enqueued, now, now, 0});
  }
}

void Scheduler::EndDead(std::vector<Queued> dead) {
  for (Queued& queued : dead) {
    core::Clock::time_point now = core::Clock::now();
    bool cancelled = queued.task.cancellation && queued.task.cancellation->IsCancelled();
    core::Counter* counter = cancelled ? metrics_.dropped_cancelled : metrics_.dropped_expired;
    if (counter) counter->Increment();
    absl::Status status = cancelled
                              ? absl::CancelledError("request cancelled by the client")
                              : absl::DeadlineExceededError("request deadline passed in the queue");
    queued.task.done(status, {queued.enqueued, now, now, 0});
  }
}

void Scheduler::RunBatch(std::vector<Queued> batch) {
  std::vector<engine::SegmentInput> inputs;
  inputs.reserve(batch.size());
  for (const Queued& queued : batch) {
    inputs.push_back({queued.task.text, queued.task.voice_id, queued.task.speed});
  }
  core::Clock::time_point started = core::Clock::now();
  std::vector<absl::StatusOr<audio::PcmAudio>> results;
  try {
    results = engine_->Synthesize(inputs);
  } catch (const std::exception& error) {
    // Engines report errors as statuses; this keeps a stray exception from killing the worker.
    results.clear();
    results.resize(batch.size(), core::Internal(std::string("engine failed: ") + error.what()));
  }
  if (results.size() != batch.size()) {
    results.clear();
    results.resize(batch.size(), core::Internal("engine returned the wrong number of results"));
  }
  core::Clock::time_point finished = core::Clock::now();
  if (metrics_.batch_size) metrics_.batch_size->Observe(static_cast<double>(batch.size()));
  if (metrics_.synthesized) metrics_.synthesized->Increment(static_cast<double>(batch.size()));
  for (size_t i = 0; i < batch.size(); ++i) {
    if (metrics_.engine_errors && !results[i].ok()) metrics_.engine_errors->Increment();
    if (metrics_.queue_wait_seconds) {
      metrics_.queue_wait_seconds->Observe(
          std::chrono::duration<double>(started - batch[i].enqueued).count());
    }
    batch[i].task.done(std::move(results[i]),
                       {batch[i].enqueued, started, finished, static_cast<int>(batch.size())});
  }
}

int Scheduler::RetryAfterSeconds(core::Clock::time_point now) const {
  if (recent_completions_.size() < 2) return 1;
  // Segments per second over the window, counting the time since the last completion so a
  // stalled engine does not look fast.
  double span = std::chrono::duration<double>(now - recent_completions_.front()).count();
  if (span <= 0) return 1;
  double rate = static_cast<double>(recent_completions_.size()) / span;
  double seconds = std::ceil(static_cast<double>(queue_.size()) / rate);
  return static_cast<int>(std::clamp(seconds, 1.0, static_cast<double>(kMaxRetryAfterSeconds)));
}

}  // namespace voxserve::scheduler
