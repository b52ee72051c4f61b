#include "scheduler/scheduler.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "spdlog/spdlog.h"

namespace voxserve::scheduler {
namespace {

// How many queued entries one batch formation looks at, at most: keeps dispatch cost flat when
// the queue is long and the head's voice is rare. Batches form from the front of the queue.
constexpr size_t kMaxScan = 256;
// Completions remembered for the drain-rate estimate behind Retry-After.
constexpr size_t kDrainWindow = 128;
constexpr int kMaxRetryAfterSeconds = 60;
// Restart backoff of a lost worker: 100 ms after the first loss, doubling per consecutive
// failure up to 10 s, so a worker that dies at once on every start costs little CPU.
constexpr std::chrono::milliseconds kFirstBackoff{100};
constexpr std::chrono::milliseconds kMaxBackoff{10'000};

std::chrono::milliseconds Backoff(int failures) {
  if (failures <= 0) return std::chrono::milliseconds(0);
  auto delay = kFirstBackoff * (1LL << std::min(failures - 1, 16));
  return std::min<std::chrono::milliseconds>(delay, kMaxBackoff);
}

}  // namespace

Scheduler::Scheduler(std::shared_ptr<engine::Engine> engine, const SchedulerConfig& config,
                     ModelSchedulerMetrics metrics)
    : engine_(std::move(engine)),
      config_(config),
      max_batch_size_(std::max(1, std::min(config.max_batch_size, engine_->info().max_batch_size))),
      streaming_(engine_->AsStreaming() != nullptr),
      max_active_(streaming_ ? std::max(1, std::min(config.max_active,
                                                    engine_->AsStreaming()->max_active()))
                             : 1),
      metrics_(metrics) {}

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(std::shared_ptr<engine::Engine> engine,
                                                             const SchedulerConfig& config,
                                                             ModelSchedulerMetrics metrics,
                                                             InstanceFactory instances) {
  if (auto status = config.Validate(engine->info().id); !status.ok()) return status;
  std::unique_ptr<Scheduler> scheduler(new Scheduler(std::move(engine), config, metrics));
  Scheduler& s = *scheduler;
  const int count = config.ResolvedInstances();
  s.supervised_ = static_cast<bool>(instances);
  for (int i = 0; i < count; ++i) {
    s.instances_.push_back(instances ? instances(i)
                                     : std::make_unique<InProcessInstance>(s.engine_));
  }
  s.states_.resize(count);
  for (int i = 0; i < count; ++i) {
    s.busy_seconds_.push_back(metrics.instance_busy_seconds ? metrics.instance_busy_seconds(i)
                                                            : nullptr);
  }
  for (int i = 0; i < count; ++i) {
    s.threads_.emplace_back([raw = scheduler.get(), i] {
      if (raw->streaming_) {
        raw->StepLoop(i);
      } else {
        raw->InstanceLoop(i);
      }
    });
  }
  std::unique_lock lock(s.mutex_);
  bool all_tried =
      s.first_starts_.wait_for(lock, std::chrono::milliseconds(config.startup_timeout_ms), [&s] {
        return std::all_of(s.states_.begin(), s.states_.end(),
                           [](const InstanceState& state) { return state.tried; });
      });
  if (s.live_ == 0) {
    lock.unlock();
    return absl::UnavailableError("model " + s.engine_->info().id + ": no engine instance started" +
                                  (all_tried
                                       ? " (see the log for why)"
                                       : " within startup_timeout_ms (" +
                                             std::to_string(config.startup_timeout_ms) + " ms)"));
  }
  return scheduler;
}

int Scheduler::LiveInstances() const {
  std::lock_guard lock(mutex_);
  return live_;
}

int Scheduler::Restarts() const {
  std::lock_guard lock(mutex_);
  return restarts_;
}

Scheduler::~Scheduler() { Shutdown(); }

void Scheduler::Shutdown() {
  Stop();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void Scheduler::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  first_starts_.notify_all();
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
    if (task.first_of_request) {
      priority -= std::chrono::milliseconds(config_.first_segment_lead_ms);
    } else if (task.listener_runs_out) {
      priority = *task.listener_runs_out;
    }
    queue_.emplace(priority, Queued{std::move(task), now, priority});
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

bool Scheduler::Revive(int index, std::unique_lock<std::mutex>& lock) {
  InstanceState& state = states_[index];
  while (!stopping_ && core::Clock::now() < state.retry_at) {
    wake_.wait_until(lock, state.retry_at, [&] { return stopping_; });
  }
  if (stopping_) return false;
  const bool restart = state.tried;
  lock.unlock();
  absl::Status started = instances_[index]->Start();
  lock.lock();
  state.tried = true;
  if (started.ok()) {
    state.live = true;
    ++live_;
    if (restart) {
      ++restarts_;
      if (metrics_.instance_restarts) metrics_.instance_restarts->Increment();
    }
  } else {
    ++state.failures;
    state.retry_at = core::Clock::now() + Backoff(state.failures);
    spdlog::warn("model {} instance {} did not start: {} (next try in {} ms)", engine_->info().id,
                 index, std::string(started.message()), Backoff(state.failures).count());
  }
  if (metrics_.live_instances) metrics_.live_instances->Set(live_);
  first_starts_.notify_all();
  return !stopping_;
}

void Scheduler::RequeueLocked(std::vector<Queued>& segments) {
  for (Queued& queued : segments) {
    core::Clock::time_point priority = queued.priority;
    queue_.emplace(priority, std::move(queued));
  }
  if (metrics_.queue_depth) metrics_.queue_depth->Set(static_cast<double>(queue_.size()));
  if (metrics_.requeued) metrics_.requeued->Increment(static_cast<double>(segments.size()));
}

void Scheduler::NoteLost(int index) {
  InstanceState& state = states_[index];
  if (!state.live) return;
  state.live = false;
  --live_;
  ++state.failures;
  state.retry_at = core::Clock::now() + Backoff(state.failures);
  if (metrics_.live_instances) metrics_.live_instances->Set(live_);
}

bool Scheduler::WaitForWork(int index, std::unique_lock<std::mutex>& lock) {
  if (supervised_) {
    bool woken = wake_.wait_for(lock, std::chrono::milliseconds(config_.heartbeat_ms),
                                [&] { return stopping_ || !queue_.empty(); });
    if (!woken) {
      lock.unlock();
      instances_[index]->Heartbeat();
      lock.lock();
      if (!instances_[index]->Live()) NoteLost(index);
      return false;
    }
  } else {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
  }
  return !stopping_;
}

void Scheduler::NoteCompletions(size_t count, core::Clock::time_point when) {
  for (size_t i = 0; i < count; ++i) {
    recent_completions_.push_back(when);
    if (recent_completions_.size() > kDrainWindow) recent_completions_.pop_front();
  }
}

Scheduler::Turn Scheduler::BeginTurn(int index, std::unique_lock<std::mutex>& lock) {
  if (stopping_) return Turn::kStop;
  if (states_[index].live) return Turn::kRun;
  return Revive(index, lock) ? Turn::kAgain : Turn::kStop;
}

void Scheduler::InstanceLoop(int index) {
  EngineInstance& instance = *instances_[index];
  std::unique_lock lock(mutex_);
  while (true) {
    const Turn turn = BeginTurn(index, lock);
    if (turn == Turn::kStop) break;
    if (turn == Turn::kAgain || !WaitForWork(index, lock)) continue;

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

    if (candidates.size() < static_cast<size_t>(max_batch_size_) &&
        config_.max_queue_delay_ms > 0) {
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
    RunBatch(index, std::move(batch));
    lock.lock();
    if (!instance.Live()) {
      NoteLost(index);
      continue;
    }
    states_[index].failures = 0;
    NoteCompletions(batch_size, core::Clock::now());
  }
  EndOnStop(index, lock);
}

void Scheduler::EndOnStop(int index, std::unique_lock<std::mutex>& lock) {
  // Stopping: whatever is still queued ends here, outside the lock.
  std::vector<Queued> remaining;
  for (auto& [priority, queued] : queue_) remaining.push_back(std::move(queued));
  queue_.clear();
  if (metrics_.queue_depth) metrics_.queue_depth->Set(0);
  if (states_[index].live) {
    states_[index].live = false;
    --live_;
  }
  lock.unlock();
  for (Queued& queued : remaining) {
    core::Clock::time_point now = core::Clock::now();
    queued.task.done(core::Draining("server is shutting down"), {queued.enqueued, now, now, 0});
  }
  // After the queue is ended: a worker's exit must not delay those requests.
  instances_[index]->Stop();
}

bool Scheduler::IsDead(const SegmentTask& task, core::Clock::time_point now) {
  return now >= task.deadline || (task.cancellation && task.cancellation->IsCancelled());
}

absl::Status Scheduler::DeathOf(const SegmentTask& task, std::string_view where) {
  const bool cancelled = task.cancellation && task.cancellation->IsCancelled();
  core::Counter* counter = cancelled ? metrics_.dropped_cancelled : metrics_.dropped_expired;
  if (counter) counter->Increment();
  if (cancelled) return absl::CancelledError("request cancelled by the client");
  return absl::DeadlineExceededError("request deadline passed " + std::string(where));
}

void Scheduler::EndDead(std::vector<Queued> dead) {
  for (Queued& queued : dead) {
    core::Clock::time_point now = core::Clock::now();
    queued.task.done(DeathOf(queued.task, "in the queue"), {queued.enqueued, now, now, 0});
  }
}

absl::Status InProcessInstance::Start() {
  engine::StreamingEngine* streaming = engine_->AsStreaming();
  if (streaming == nullptr || runner_) return absl::OkStatus();
  auto runner = streaming->CreateRunner();
  if (!runner.ok()) return runner.status();
  runner_ = std::move(*runner);
  return absl::OkStatus();
}

absl::Status InProcessInstance::Begin(engine::SequenceId id, const engine::SegmentInput& input) {
  if (!runner_) return EngineInstance::Begin(id, input);
  return runner_->Begin(id, input);
}

StepOutcome InProcessInstance::Step() {
  StepOutcome outcome;
  if (!runner_) return outcome;
  try {
    outcome.steps = runner_->Step();
    outcome.stats = runner_->Stats();
  } catch (const std::exception& error) {
    // As in Run: a stray exception ends this step's sequences, not the thread. The runner's
    // state is unknown now, so it is replaced before the next Begin.
    outcome.lost = core::Internal(std::string("engine failed: ") + error.what());
    runner_.reset();
    (void)Start();
  }
  return outcome;
}

void InProcessInstance::Release(engine::SequenceId id) {
  if (runner_) runner_->Release(id);
}

BatchOutcome InProcessInstance::Run(std::span<const engine::SegmentInput> batch) {
  BatchOutcome outcome;
  try {
    outcome.results = engine_->Synthesize(batch);
  } catch (const std::exception& error) {
    // Engines report errors as statuses; this keeps a stray exception from killing the worker.
    outcome.results.assign(batch.size(),
                           core::Internal(std::string("engine failed: ") + error.what()));
  }
  return outcome;
}

void Scheduler::RunBatch(int index, std::vector<Queued> batch) {
  std::vector<engine::SegmentInput> inputs;
  inputs.reserve(batch.size());
  for (const Queued& queued : batch) {
    inputs.push_back({queued.task.text, queued.task.voice_id, queued.task.speed,
                      queued.task.voice_profile, queued.task.seed, queued.task.voice_mode,
                      queued.task.instructions, queued.task.phonemes, queued.task.pitch});
  }
  core::Clock::time_point started = core::Clock::now();
  BatchOutcome outcome = instances_[index]->Run(inputs);
  if (!instances_[index]->Live()) {
    // Counted before any `done` runs, so a client told its worker was lost never sees a
    // readiness or live count that predates the loss.
    std::lock_guard lock(mutex_);
    NoteLost(index);
  }
  if (outcome.not_started) {
    // Nothing ran: back in the queue at their old places, for a live instance.
    {
      std::lock_guard lock(mutex_);
      RequeueLocked(batch);
    }
    wake_.notify_all();
    return;
  }
  std::vector<absl::StatusOr<audio::PcmAudio>> results = std::move(outcome.results);
  if (results.size() != batch.size()) {
    results.clear();
    results.resize(batch.size(), core::Internal("engine returned the wrong number of results"));
  }
  core::Clock::time_point finished = core::Clock::now();
  if (core::Counter* busy = busy_seconds_[index]) {
    busy->Increment(std::chrono::duration<double>(finished - started).count());
  }
  if (metrics_.batch_size) metrics_.batch_size->Observe(static_cast<double>(batch.size()));
  if (metrics_.synthesized) metrics_.synthesized->Increment(static_cast<double>(batch.size()));
  for (size_t i = 0; i < batch.size(); ++i) {
    if (metrics_.engine_errors && !results[i].ok()) metrics_.engine_errors->Increment();
    if (metrics_.queue_wait_seconds) {
      metrics_.queue_wait_seconds->Observe(
          std::chrono::duration<double>(started - batch[i].enqueued).count());
    }
    SegmentTiming timing{batch[i].enqueued, started, finished, static_cast<int>(batch.size())};
    if (batch[i].task.on_chunk && results[i].ok()) {
      // One path downstream: a whole segment is a stream of one chunk.
      audio::PcmAudio end;
      end.sample_rate = results[i]->sample_rate;
      batch[i].task.on_chunk(*std::move(results[i]));
      batch[i].task.done(std::move(end), timing);
      continue;
    }
    batch[i].task.done(std::move(results[i]), timing);
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
