// The scheduler's instance pool as a state machine, over fake instances that the test scripts:
// a batch a lost worker never started goes to a live instance; one lost mid-batch ends with a
// retriable 503; a lost instance is restarted (with backoff) and serves again; a model whose
// instances are all down shows zero live; Create fails when none starts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>

#include "core/error.h"
#include "core/metrics.h"
#include "scheduler/scheduler.h"
#include "scheduler_test_support.h"

namespace voxserve::scheduler {
namespace {

enum class Next { kServe, kLoseBeforeStart, kLoseDuringBatch };

// What the fake instances do and did; shared by the test and every instance. Safe cross thread.
class Script {
 public:
  void Plan(int index, std::vector<Next> plan) {
    std::lock_guard lock(mutex_);
    plans_[index].insert(plans_[index].end(), plan.begin(), plan.end());
  }
  // The next batch any instance takes is lost before it starts.
  void LoseNextBatchAnywhere() {
    std::lock_guard lock(mutex_);
    ++lose_any_;
  }
  void FailStarts(int index, int count) {
    std::lock_guard lock(mutex_);
    failing_starts_[index] = count;
  }
  void LoseOnHeartbeat(int index) {
    std::lock_guard lock(mutex_);
    lose_on_heartbeat_[index] = true;
  }
  // Restarts (starts after an instance's first) wait until released.
  void HoldRestarts(bool hold) {
    std::lock_guard lock(mutex_);
    hold_restarts_ = hold;
    changed_.notify_all();
  }
  bool WaitForStarts(int index, int count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit, [&] { return starts_[index] >= count; });
  }
  bool WaitForStartAttempts(int index, int count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit, [&] { return attempts_[index] >= count; });
  }
  int starts(int index) {
    std::lock_guard lock(mutex_);
    return starts_[index];
  }
  int stops() {
    std::lock_guard lock(mutex_);
    return stops_;
  }

  absl::Status Start(int index, bool restart) {
    std::unique_lock lock(mutex_);
    ++attempts_[index];
    changed_.notify_all();
    if (restart) changed_.wait(lock, [&] { return !hold_restarts_; });
    if (failing_starts_[index] > 0) {
      --failing_starts_[index];
      return absl::UnavailableError("scripted start failure");
    }
    ++starts_[index];
    changed_.notify_all();
    return absl::OkStatus();
  }
  Next NextBatch(int index) {
    std::lock_guard lock(mutex_);
    if (lose_any_ > 0) {
      --lose_any_;
      return Next::kLoseBeforeStart;
    }
    std::deque<Next>& plan = plans_[index];
    if (plan.empty()) return Next::kServe;
    Next next = plan.front();
    plan.pop_front();
    return next;
  }
  bool LosesOnHeartbeat(int index) {
    std::lock_guard lock(mutex_);
    return std::exchange(lose_on_heartbeat_[index], false);
  }
  void NoteStop() {
    std::lock_guard lock(mutex_);
    ++stops_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int, std::deque<Next>> plans_;
  std::map<int, int> failing_starts_;
  std::map<int, bool> lose_on_heartbeat_;
  std::map<int, int> starts_;
  std::map<int, int> attempts_;
  bool hold_restarts_ = false;
  int lose_any_ = 0;
  int stops_ = 0;
};

class FakeInstance : public EngineInstance {
 public:
  FakeInstance(int index, std::shared_ptr<Script> script) : index_(index), script_(script) {}
  bool Live() const override { return live_; }
  absl::Status Start() override {
    absl::Status status = script_->Start(index_, started_before_);
    started_before_ = true;
    live_ = status.ok();
    return status;
  }
  BatchOutcome Run(std::span<const engine::SegmentInput> batch) override {
    BatchOutcome outcome;
    switch (script_->NextBatch(index_)) {
      case Next::kLoseBeforeStart:
        live_ = false;
        outcome.not_started = true;
        return outcome;
      case Next::kLoseDuringBatch:
        live_ = false;
        outcome.results.assign(batch.size(), core::InstanceLost("worker lost", 1));
        return outcome;
      case Next::kServe:
        for (const engine::SegmentInput& input : batch) {
          audio::PcmAudio pcm;
          pcm.sample_rate = 16000;
          pcm.samples.assign(input.text.size(), 0.1f);
          outcome.results.push_back(std::move(pcm));
        }
        return outcome;
    }
    return outcome;
  }
  void Heartbeat() override {
    if (script_->LosesOnHeartbeat(index_)) live_ = false;
  }
  void Stop() override {
    live_ = false;
    script_->NoteStop();
  }

 private:
  const int index_;
  std::shared_ptr<Script> script_;
  bool live_ = false;
  bool started_before_ = false;
};

class InstancePoolTest : public ::testing::Test {
 protected:
  void TearDown() override {
    script_->HoldRestarts(false);
    scheduler_.reset();
  }

  absl::Status Start(int instances, int heartbeat_ms = 60'000) {
    SchedulerConfig config = OneAtATime();
    config.instances = instances;
    config.heartbeat_ms = heartbeat_ms;
    metrics_.requeued = &registry_.AddCounter("requeued", "h", {}).WithLabels({});
    metrics_.instance_restarts = &registry_.AddCounter("restarts", "h", {}).WithLabels({});
    metrics_.live_instances = &registry_.AddGauge("live", "h", {}).WithLabels({});
    auto created = Scheduler::Create(
        std::make_shared<test_support::FakeEngine>(), config, metrics_,
        [script = script_](int index) { return std::make_unique<FakeInstance>(index, script); });
    if (!created.ok()) return created.status();
    scheduler_ = *std::move(created);
    return absl::OkStatus();
  }

  absl::Status Submit(const std::string& text) {
    SegmentTask task;
    task.text = text;
    task.voice_id = "alice";
    task.done = outcomes_.Track(text);
    return scheduler_->Submit(std::move(task));
  }

  Outcomes outcomes_;
  core::MetricsRegistry registry_;
  ModelSchedulerMetrics metrics_;
  std::shared_ptr<Script> script_ = std::make_shared<Script>();
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(InstancePoolTest, EveryInstanceStartsBeforeCreateReturns) {
  ASSERT_TRUE(Start(3).ok());
  EXPECT_EQ(scheduler_->Instances(), 3);
  EXPECT_EQ(scheduler_->LiveInstances(), 3);
  EXPECT_EQ(scheduler_->Restarts(), 0);
  EXPECT_EQ(metrics_.live_instances->Value(), 3);
}

TEST_F(InstancePoolTest, BatchALostWorkerNeverStartedIsServedAfterAll) {
  script_->Plan(0, {Next::kLoseBeforeStart});
  ASSERT_TRUE(Start(1).ok());
  ASSERT_TRUE(Submit("hello").ok());
  ASSERT_TRUE(outcomes_.WaitFor("hello"));
  EXPECT_TRUE(outcomes_.Get("hello").status.ok()) << outcomes_.Get("hello").status;
  EXPECT_EQ(outcomes_.CallsOf("hello"), 1);
  EXPECT_EQ(metrics_.requeued->Value(), 1);
  EXPECT_EQ(scheduler_->Restarts(), 1);
}

TEST_F(InstancePoolTest, UnstartedBatchGoesToAnotherLiveInstance) {
  script_->LoseNextBatchAnywhere();
  script_->HoldRestarts(true);  // the lost instance stays down: only the other can serve
  ASSERT_TRUE(Start(2).ok());
  ASSERT_TRUE(Submit("a").ok());
  ASSERT_TRUE(outcomes_.WaitFor("a"));
  // Whichever instance took it lost it unstarted; the other served it, exactly once.
  EXPECT_TRUE(outcomes_.Get("a").status.ok());
  EXPECT_EQ(outcomes_.CallsOf("a"), 1);
  EXPECT_EQ(metrics_.requeued->Value(), 1);
  EXPECT_EQ(scheduler_->LiveInstances(), 1);
  EXPECT_EQ(scheduler_->Restarts(), 0);
}

TEST_F(InstancePoolTest, SegmentsLostMidBatchEndWithARetriableUnavailable) {
  script_->Plan(0, {Next::kLoseDuringBatch});
  ASSERT_TRUE(Start(1).ok());
  ASSERT_TRUE(Submit("lost").ok());
  ASSERT_TRUE(outcomes_.WaitFor("lost"));
  absl::Status status = outcomes_.Get("lost").status;
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(core::DetailOf(status).retry_after_seconds, 1);
  EXPECT_EQ(metrics_.requeued->Value(), 0);

  // The instance comes back and serves again.
  ASSERT_TRUE(script_->WaitForStarts(0, 2));
  ASSERT_TRUE(Submit("after").ok());
  ASSERT_TRUE(outcomes_.WaitFor("after"));
  EXPECT_TRUE(outcomes_.Get("after").status.ok());
  EXPECT_EQ(scheduler_->Restarts(), 1);
  EXPECT_EQ(metrics_.instance_restarts->Value(), 1);
}

TEST_F(InstancePoolTest, ModelWithEveryInstanceDownHasZeroLiveAndItsWorkWaits) {
  script_->Plan(0, {Next::kLoseDuringBatch});
  script_->HoldRestarts(true);
  ASSERT_TRUE(Start(1).ok());
  ASSERT_TRUE(Submit("lost").ok());
  ASSERT_TRUE(outcomes_.WaitFor("lost"));
  ASSERT_TRUE(script_->WaitForStartAttempts(0, 2));  // the restart is held
  EXPECT_EQ(scheduler_->LiveInstances(), 0);
  EXPECT_EQ(metrics_.live_instances->Value(), 0);

  ASSERT_TRUE(Submit("waits").ok());  // queued, not lost: it runs once the instance is back
  EXPECT_EQ(outcomes_.CallsOf("waits"), 0);
  script_->HoldRestarts(false);
  ASSERT_TRUE(outcomes_.WaitFor("waits"));
  EXPECT_TRUE(outcomes_.Get("waits").status.ok());
  EXPECT_EQ(scheduler_->LiveInstances(), 1);
}

TEST_F(InstancePoolTest, FailedRestartsAreRetriedUntilOneSucceeds) {
  script_->Plan(0, {Next::kLoseDuringBatch});
  ASSERT_TRUE(Start(1).ok());
  script_->FailStarts(0, 2);  // 100 ms, then 200 ms of backoff
  ASSERT_TRUE(Submit("lost").ok());
  ASSERT_TRUE(outcomes_.WaitFor("lost"));
  ASSERT_TRUE(script_->WaitForStarts(0, 2));
  EXPECT_TRUE(script_->WaitForStartAttempts(0, 4));
  // The instance takes work only once its restart is counted.
  ASSERT_TRUE(Submit("after").ok());
  ASSERT_TRUE(outcomes_.WaitFor("after"));
  EXPECT_EQ(scheduler_->Restarts(), 1);
}

TEST_F(InstancePoolTest, HeartbeatFindsAnIdleLostWorkerAndRestartsIt) {
  ASSERT_TRUE(Start(1, /*heartbeat_ms=*/10).ok());
  script_->LoseOnHeartbeat(0);
  ASSERT_TRUE(script_->WaitForStarts(0, 2));
  ASSERT_TRUE(Submit("after").ok());
  ASSERT_TRUE(outcomes_.WaitFor("after"));
  EXPECT_TRUE(outcomes_.Get("after").status.ok());
}

TEST_F(InstancePoolTest, CreateFailsWhenNoInstanceStarts) {
  script_->FailStarts(0, 1000);
  script_->FailStarts(1, 1000);
  absl::Status status = Start(2);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), ::testing::HasSubstr("no engine instance started"));
}

TEST_F(InstancePoolTest, ShutdownStopsEveryInstance) {
  ASSERT_TRUE(Start(2).ok());
  scheduler_->Shutdown();
  EXPECT_EQ(script_->stops(), 2);
}

}  // namespace
}  // namespace voxserve::scheduler
