// Segments whose request was cancelled or whose deadline passed never reach the engine; their
// `done` says why, and SweepDeadSegments ends them without waiting for a worker.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "scheduler/scheduler.h"
#include "scheduler_test_support.h"

namespace voxserve::scheduler {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Not;

TaskSpec Cancellable(std::shared_ptr<core::CancellationToken> token) {
  TaskSpec spec;
  spec.cancellation = std::move(token);
  return spec;
}

TaskSpec Expiring(core::Clock::time_point deadline) {
  TaskSpec spec;
  spec.deadline = deadline;
  return spec;
}

SchedulerConfig BatchOfFour() {
  SchedulerConfig config = OneAtATime();
  config.max_batch_size = 4;
  return config;
}

test_support::FakeEngineOptions EngineBatchOfFour() {
  test_support::FakeEngineOptions options;
  options.max_batch_size = 4;
  return options;
}

TEST_F(SchedulerTest, CancelledSegmentNeverReachesTheEngine) {
  Start(OneAtATime());
  HoldWorker();
  auto token = std::make_shared<core::CancellationToken>();
  ASSERT_TRUE(Submit("cancelled", Cancellable(token)).ok());
  token->Cancel();

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitFor("cancelled"));

  EXPECT_EQ(outcomes_.CodeOf("cancelled"), absl::StatusCode::kCancelled);
  EXPECT_EQ(outcomes_.Get("cancelled").timing.batch_size, 0);
  EXPECT_THAT(engine_->texts(), Not(Contains("cancelled")));
}

TEST_F(SchedulerTest, SegmentWhoseDeadlinePassedNeverReachesTheEngine) {
  Start(OneAtATime());

  ASSERT_TRUE(Submit("expired", Expiring(core::Clock::now() - std::chrono::milliseconds(1))).ok());
  ASSERT_TRUE(outcomes_.WaitFor("expired"));

  EXPECT_EQ(outcomes_.CodeOf("expired"), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(engine_->calls().empty());
}

TEST_F(SchedulerTest, SegmentExpiringWhileQueuedNeverReachesTheEngine) {
  Start(OneAtATime());
  HoldWorker();
  core::Clock::time_point deadline = core::Clock::now() + std::chrono::milliseconds(20);
  ASSERT_TRUE(Submit("expiring", Expiring(deadline)).ok());
  ASSERT_TRUE(Submit("alive").ok());
  // Setup, not a speed claim: release the worker only once the deadline is behind us.
  std::this_thread::sleep_until(deadline + std::chrono::milliseconds(5));

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(3));

  EXPECT_EQ(outcomes_.CodeOf("expiring"), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(outcomes_.Get("alive").status.ok());
  EXPECT_THAT(engine_->texts(), ElementsAre("hold", "alive"));
}

TEST_F(SchedulerTest, CancelledSegmentBehindALiveOneIsLeftOutOfTheBatch) {
  Start(BatchOfFour(), EngineBatchOfFour());
  HoldWorker();
  auto token = std::make_shared<core::CancellationToken>();
  ASSERT_TRUE(Submit("alive-1").ok());
  ASSERT_TRUE(Submit("cancelled", Cancellable(token)).ok());
  ASSERT_TRUE(Submit("alive-2").ok());
  token->Cancel();

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(4));

  EXPECT_EQ(outcomes_.CodeOf("cancelled"), absl::StatusCode::kCancelled);
  EXPECT_THAT(CallsAfterHold(), ElementsAre(ElementsAre("alive-1", "alive-2")));
}

TEST_F(SchedulerTest, ExpiredSegmentBehindALiveOneIsLeftOutOfTheBatch) {
  Start(BatchOfFour(), EngineBatchOfFour());
  HoldWorker();
  ASSERT_TRUE(Submit("alive-1").ok());
  ASSERT_TRUE(Submit("expired", Expiring(core::Clock::now() - std::chrono::milliseconds(1))).ok());
  ASSERT_TRUE(Submit("alive-2").ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(4));

  EXPECT_EQ(outcomes_.CodeOf("expired"), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(CallsAfterHold(), ElementsAre(ElementsAre("alive-1", "alive-2")));
}

TEST_F(SchedulerTest, SweepEndsACancelledSegmentWhileEveryWorkerIsBusy) {
  Start(OneAtATime());
  HoldWorker();
  auto token = std::make_shared<core::CancellationToken>();
  ASSERT_TRUE(Submit("cancelled", Cancellable(token)).ok());
  ASSERT_TRUE(Submit("alive").ok());

  token->Cancel();
  scheduler_->SweepDeadSegments();

  // The gate is still closed: only the sweep can have ended it.
  ASSERT_TRUE(outcomes_.WaitFor("cancelled"));
  EXPECT_EQ(outcomes_.CodeOf("cancelled"), absl::StatusCode::kCancelled);
  EXPECT_EQ(scheduler_->QueueDepth(), 1u);
  EXPECT_EQ(engine_->in_flight(), 1u);
  EXPECT_EQ(outcomes_.CallsOf("alive"), 0);

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(3));
  EXPECT_EQ(outcomes_.CallsOf("cancelled"), 1);
  EXPECT_THAT(engine_->texts(), ElementsAre("hold", "alive"));
}

TEST_F(SchedulerTest, SweepLeavesLiveSegmentsQueued) {
  Start(OneAtATime());
  HoldWorker();
  ASSERT_TRUE(Submit("alive-1").ok());
  ASSERT_TRUE(Submit("alive-2", Later()).ok());

  scheduler_->SweepDeadSegments();

  EXPECT_EQ(scheduler_->QueueDepth(), 2u);
  EXPECT_EQ(outcomes_.finished(), 0u);
}

TEST_F(SchedulerTest, SweepFreesCapacityForNewRequests) {
  SchedulerConfig config = OneAtATime();
  config.queue_capacity = 1;
  Start(config);
  HoldWorker();
  auto token = std::make_shared<core::CancellationToken>();
  ASSERT_TRUE(Submit("cancelled", Cancellable(token)).ok());
  ASSERT_EQ(Submit("rejected").code(), absl::StatusCode::kResourceExhausted);

  token->Cancel();
  scheduler_->SweepDeadSegments();

  EXPECT_TRUE(Submit("admitted").ok());
}

TEST_F(SchedulerTest, CancellingAfterTheEngineStartedDoesNotChangeTheResult) {
  Start(OneAtATime());
  auto token = std::make_shared<core::CancellationToken>();
  HoldWorker(Cancellable(token));

  token->Cancel();
  scheduler_->SweepDeadSegments();
  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitFor("hold"));

  // The scheduler does not second-guess work it already gave the engine; the service decides.
  EXPECT_TRUE(outcomes_.Get("hold").status.ok());
  EXPECT_EQ(outcomes_.CallsOf("hold"), 1);
}

}  // namespace
}  // namespace voxserve::scheduler
