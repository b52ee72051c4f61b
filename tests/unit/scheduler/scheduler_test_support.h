// What the scheduler tests share: a recorder for `done` callbacks and a fixture that runs one
// Scheduler over a FakeEngine. Ordering comes from the engine's gate, never from sleeping.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/request_context.h"
#include "scheduler/scheduler.h"
#include "support/fake_engine.h"

namespace voxserve::scheduler {

// A safety net for waits on other threads: long enough never to fire on a loaded CI machine
// (or under ThreadSanitizer), short enough that a hung test fails instead of blocking the run.
inline constexpr std::chrono::seconds kWaitLimit{5};

// What one task's `done` received.
struct Outcome {
  absl::Status status;
  size_t samples = 0;
  SegmentTiming timing;
  int calls = 0;  // how often `done` ran for this task; must end up exactly 1
};

// Records every `done` by task name. Safe cross thread; must outlive the scheduler.
class Outcomes {
 public:
  SegmentDone Track(const std::string& name) {
    {
      std::lock_guard lock(mutex_);
      outcomes_[name];  // known even before it finishes, so "never ran" is observable
    }
    return [this, name](absl::StatusOr<audio::PcmAudio> audio, const SegmentTiming& timing) {
      std::lock_guard lock(mutex_);
      Outcome& outcome = outcomes_[name];
      outcome.status = audio.status();
      outcome.samples = audio.ok() ? audio->samples.size() : 0;
      outcome.timing = timing;
      ++outcome.calls;
      ++finished_;
      changed_.notify_all();
    };
  }

  // Waits until `name`'s done has run; false on timeout.
  bool WaitFor(const std::string& name) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit, [&] { return outcomes_[name].calls > 0; });
  }
  // Waits until `count` done calls have run in all.
  bool WaitForCount(size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit, [&] { return finished_ >= count; });
  }

  Outcome Get(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = outcomes_.find(name);
    return it == outcomes_.end() ? Outcome{} : it->second;
  }
  absl::StatusCode CodeOf(const std::string& name) const { return Get(name).status.code(); }
  int CallsOf(const std::string& name) const { return Get(name).calls; }
  size_t finished() const {
    std::lock_guard lock(mutex_);
    return finished_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Outcome> outcomes_;  // guarded by mutex_
  size_t finished_ = 0;                      // guarded by mutex_
};

// How a test task differs from a plain first segment for voice "alice".
struct TaskSpec {
  std::string voice = "alice";
  bool first = true;
  core::Clock::time_point deadline = core::Clock::time_point::max();
  std::shared_ptr<core::CancellationToken> cancellation;
  std::optional<core::Clock::time_point> listener_runs_out;
};

inline TaskSpec Later(std::string voice = "alice") {
  TaskSpec spec;
  spec.voice = std::move(voice);
  spec.first = false;
  return spec;
}

inline TaskSpec Voice(std::string voice) {
  TaskSpec spec;
  spec.voice = std::move(voice);
  return spec;
}

class SchedulerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (engine_) engine_->OpenGate();
    scheduler_.reset();  // joins the workers before outcomes_ goes away
  }

  void Start(SchedulerConfig config, test_support::FakeEngineOptions options = {},
             ModelSchedulerMetrics metrics = {}) {
    engine_ = std::make_shared<test_support::FakeEngine>(std::move(options));
    auto scheduler = Scheduler::Create(engine_, config, metrics);
    // A test with a configuration Create refuses is itself wrong; the steps after Start would
    // only crash on the missing scheduler, so stop here with the reason.
    if (!scheduler.ok()) {
      std::fprintf(stderr, "Scheduler::Create failed: %s\n", scheduler.status().ToString().c_str());
      std::abort();
    }
    scheduler_ = std::move(*scheduler);
  }

  // A task named `text` whose done is recorded under the same name.
  SegmentTask Task(const std::string& text, const TaskSpec& spec = {}) {
    SegmentTask task;
    task.text = text;
    task.voice_id = spec.voice;
    task.first_of_request = spec.first;
    task.deadline = spec.deadline;
    task.cancellation = spec.cancellation;
    task.listener_runs_out = spec.listener_runs_out;
    task.done = outcomes_.Track(text);
    return task;
  }

  absl::Status Submit(const std::string& text, const TaskSpec& spec = {}) {
    return scheduler_->Submit(Task(text, spec));
  }

  // Closes the engine's gate and keeps the (single) worker busy with a segment named "hold",
  // so the test can queue segments that no worker will take until it releases the gate.
  void HoldWorker(const TaskSpec& spec = {}) {
    size_t calls_before = engine_->calls().size();
    engine_->CloseGate();
    ASSERT_TRUE(Submit("hold", spec).ok());
    ASSERT_TRUE(engine_->WaitForCalls(calls_before + 1));
    ASSERT_EQ(scheduler_->QueueDepth(), 0u);
  }

  // Texts of each engine call after the "hold" call, one vector per call.
  std::vector<std::vector<std::string>> CallsAfterHold() const {
    std::vector<std::vector<std::string>> texts;
    for (const test_support::EngineCall& call : engine_->calls()) {
      if (call.texts == std::vector<std::string>{"hold"}) continue;
      texts.push_back(call.texts);
    }
    return texts;
  }

  Outcomes outcomes_;  // declared first: destroyed after the scheduler whose callbacks it serves
  std::shared_ptr<test_support::FakeEngine> engine_;
  std::unique_ptr<Scheduler> scheduler_;
};

// A configuration for one worker that dispatches whatever it has at once, one segment a call.
inline SchedulerConfig OneAtATime() {
  SchedulerConfig config;
  config.instances = 1;
  config.max_batch_size = 1;
  config.max_queue_delay_ms = 0;
  return config;
}

}  // namespace voxserve::scheduler
