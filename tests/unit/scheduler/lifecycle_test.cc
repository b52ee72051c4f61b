// Stopping, engine failures and callbacks: every accepted task's `done` runs exactly once, with
// Unavailable when the scheduler stops first and Internal when the engine misbehaves.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"
#include "scheduler/scheduler.h"
#include "scheduler_test_support.h"

namespace voxserve::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(SchedulerTest, StopEndsQueuedSegmentsWithUnavailableAfterTheCurrentBatch) {
  Start(OneAtATime());
  HoldWorker();
  ASSERT_TRUE(Submit("queued-1").ok());
  ASSERT_TRUE(Submit("queued-2", Later()).ok());

  scheduler_->Stop();  // returns at once although the worker is still inside the engine
  engine_->OpenGate();
  scheduler_->Shutdown();

  EXPECT_TRUE(outcomes_.Get("hold").status.ok());
  EXPECT_EQ(outcomes_.CodeOf("queued-1"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(outcomes_.CodeOf("queued-2"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(core::DetailOf(outcomes_.Get("queued-1").status).reason, core::ErrorReason::kDraining);
  EXPECT_THAT(engine_->texts(), ElementsAre("hold"));
  EXPECT_EQ(scheduler_->QueueDepth(), 0u);
}

TEST_F(SchedulerTest, SubmitAfterStopFailsWithUnavailableAndDoesNotTakeTheTask) {
  Start(OneAtATime());
  scheduler_->Stop();

  absl::Status first = Submit("first");
  absl::Status later = Submit("later", Later());
  scheduler_->Shutdown();

  EXPECT_EQ(first.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(core::DetailOf(first).reason, core::ErrorReason::kDraining);
  EXPECT_EQ(later.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(outcomes_.finished(), 0u);
}

TEST_F(SchedulerTest, DestroyingTheSchedulerEndsQueuedSegments) {
  Start(OneAtATime());
  HoldWorker();
  ASSERT_TRUE(Submit("queued").ok());

  engine_->OpenGate();
  scheduler_.reset();

  EXPECT_EQ(outcomes_.CallsOf("hold"), 1);
  EXPECT_EQ(outcomes_.CallsOf("queued"), 1);
}

TEST_F(SchedulerTest, StopMayBeCalledFromADoneCallback) {
  Start(OneAtATime());
  SegmentTask task = Task("stopper");
  SegmentDone record = std::move(task.done);
  task.done = [this, record = std::move(record)](absl::StatusOr<audio::PcmAudio> audio,
                                                 const SegmentTiming& timing) mutable {
    scheduler_->Stop();
    record(std::move(audio), timing);
  };
  ASSERT_TRUE(scheduler_->Submit(std::move(task)).ok());

  ASSERT_TRUE(outcomes_.WaitFor("stopper"));
  EXPECT_EQ(Submit("too-late").code(), absl::StatusCode::kUnavailable);
}

TEST_F(SchedulerTest, DoneRunsOutsideTheLockSoItMaySubmitMoreSegments) {
  Start(OneAtATime());
  SegmentTask task = Task("segment-1");
  SegmentDone record = std::move(task.done);
  task.done = [this, record = std::move(record)](absl::StatusOr<audio::PcmAudio> audio,
                                                 const SegmentTiming& timing) mutable {
    // What the service does: the next segment of the request goes in from the callback.
    EXPECT_TRUE(scheduler_->Submit(Task("segment-2", Later())).ok());
    EXPECT_EQ(scheduler_->QueueDepth(), 1u);
    record(std::move(audio), timing);
  };
  ASSERT_TRUE(scheduler_->Submit(std::move(task)).ok());

  ASSERT_TRUE(outcomes_.WaitFor("segment-2"));
  EXPECT_THAT(engine_->texts(), ElementsAre("segment-1", "segment-2"));
}

TEST_F(SchedulerTest, FailedSegmentDoesNotFailTheRestOfItsBatch) {
  SchedulerConfig config = OneAtATime();
  config.max_batch_size = 4;
  test_support::FakeEngineOptions options;
  options.max_batch_size = 4;
  options.fail_marker = "!";
  Start(config, options);
  HoldWorker();
  for (const char* text : {"ok-1", "bad!", "ok-2"}) ASSERT_TRUE(Submit(text).ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(4));

  EXPECT_EQ(outcomes_.CodeOf("bad!"), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(outcomes_.Get("ok-1").status.ok());
  EXPECT_TRUE(outcomes_.Get("ok-2").status.ok());
  EXPECT_EQ(outcomes_.Get("ok-2").samples, 4u);
}

TEST_F(SchedulerTest, EngineExceptionBecomesInternalAndTheWorkerCarriesOn) {
  test_support::FakeEngineOptions options;
  options.throw_marker = "boom";
  Start(OneAtATime(), options);

  ASSERT_TRUE(Submit("boom").ok());
  ASSERT_TRUE(outcomes_.WaitFor("boom"));
  ASSERT_TRUE(Submit("after").ok());
  ASSERT_TRUE(outcomes_.WaitFor("after"));

  Outcome boom = outcomes_.Get("boom");
  EXPECT_EQ(boom.status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(boom.status.message()), HasSubstr("fake engine asked to throw"));
  EXPECT_TRUE(outcomes_.Get("after").status.ok());
}

TEST_F(SchedulerTest, WrongNumberOfEngineResultsFailsTheWholeBatchWithInternal) {
  SchedulerConfig config = OneAtATime();
  config.max_batch_size = 2;
  test_support::FakeEngineOptions options;
  options.max_batch_size = 2;
  options.short_result_marker = "short";
  Start(config, options);
  HoldWorker();
  ASSERT_TRUE(Submit("fine").ok());
  ASSERT_TRUE(Submit("short").ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(3));

  EXPECT_EQ(outcomes_.CodeOf("fine"), absl::StatusCode::kInternal);
  EXPECT_EQ(outcomes_.CodeOf("short"), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(outcomes_.Get("fine").status.message()), HasSubstr("number of results"));
}

TEST(SchedulerCreateTest, RejectsAnInvalidConfigurationNamingTheKey) {
  auto engine = std::make_shared<test_support::FakeEngine>();
  SchedulerConfig config;
  config.instances = -1;

  auto scheduler = Scheduler::Create(engine, config, {});

  ASSERT_FALSE(scheduler.ok());
  EXPECT_EQ(scheduler.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(scheduler.status().message()), HasSubstr("models[fake].instances"));
}

}  // namespace
}  // namespace voxserve::scheduler
