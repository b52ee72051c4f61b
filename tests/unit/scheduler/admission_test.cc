// Admission control: a new request is refused with QueueFull (and a Retry-After hint) while
// queue_capacity segments wait; a request that has started is never cut off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "core/error.h"
#include "scheduler/scheduler.h"
#include "scheduler_test_support.h"

namespace voxserve::scheduler {
namespace {

using ::testing::AllOf;
using ::testing::Ge;
using ::testing::HasSubstr;
using ::testing::Le;
using ::testing::Optional;

SchedulerConfig Capacity(int queue_capacity) {
  SchedulerConfig config = OneAtATime();
  config.queue_capacity = queue_capacity;
  return config;
}

TEST_F(SchedulerTest, FullQueueRejectsFirstSegmentsWithQueueFullAndARetryHint) {
  Start(Capacity(2));
  HoldWorker();
  ASSERT_TRUE(Submit("first-1").ok());
  ASSERT_TRUE(Submit("first-2").ok());

  absl::Status rejected = Submit("first-3");

  EXPECT_EQ(rejected.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(rejected.message()), HasSubstr("capacity"));
  core::ErrorDetail detail = core::DetailOf(rejected);
  EXPECT_EQ(detail.reason, core::ErrorReason::kQueueFull);
  EXPECT_THAT(detail.retry_after_seconds, Optional(AllOf(Ge(1), Le(60))));
  EXPECT_EQ(scheduler_->QueueDepth(), 2u);
}

TEST_F(SchedulerTest, RetryHintGrowsWhileTheEngineStalls) {
  constexpr int kCapacity = 10;
  Start(Capacity(kCapacity));
  for (const char* text : {"done-1", "done-2"}) ASSERT_TRUE(Submit(text).ok());
  ASSERT_TRUE(outcomes_.WaitForCount(2));
  HoldWorker();
  for (int i = 0; i < kCapacity; ++i) ASSERT_TRUE(Submit("first-" + std::to_string(i)).ok());
  // Setup, not a speed claim: the engine stalls. The drain rate counts the time since the
  // oldest remembered completion, so it is now at most 2 segments / 0.3 s, and draining 10
  // segments takes at least 1.5 s. A slower machine only raises the hint further.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  core::ErrorDetail detail = core::DetailOf(Submit("first-rejected"));

  EXPECT_EQ(detail.reason, core::ErrorReason::kQueueFull);
  EXPECT_THAT(detail.retry_after_seconds, Optional(AllOf(Ge(2), Le(60))));
}

TEST_F(SchedulerTest, RejectedTaskIsNotTakenAndItsDoneNeverRuns) {
  Start(Capacity(1));
  HoldWorker();
  ASSERT_TRUE(Submit("queued").ok());
  ASSERT_FALSE(Submit("rejected").ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(2));
  scheduler_->Shutdown();

  EXPECT_EQ(outcomes_.CallsOf("rejected"), 0);
  EXPECT_EQ(outcomes_.finished(), 2u);
}

TEST_F(SchedulerTest, FullQueueStillAcceptsLaterSegmentsOfStartedRequests) {
  Start(Capacity(2));
  HoldWorker();
  ASSERT_TRUE(Submit("first-1").ok());
  ASSERT_TRUE(Submit("first-2").ok());

  EXPECT_TRUE(Submit("later-1", Later()).ok());
  EXPECT_TRUE(Submit("later-2", Later()).ok());
  EXPECT_EQ(scheduler_->QueueDepth(), 4u);
}

// The queue may hold more than queue_capacity (later segments are never refused): the message
// once said "at capacity (4 segments queued)" of a capacity of 2.
TEST_F(SchedulerTest, RefusalStatesTheQueuedSegmentsAndTheCapacity) {
  Start(Capacity(2));
  HoldWorker();
  ASSERT_TRUE(Submit("first-1").ok());
  ASSERT_TRUE(Submit("first-2").ok());
  ASSERT_TRUE(Submit("later-1", Later()).ok());
  ASSERT_TRUE(Submit("later-2", Later()).ok());

  absl::Status rejected = Submit("first-3");

  EXPECT_THAT(
      std::string(rejected.message()),
      AllOf(HasSubstr("holds 4 segments"), HasSubstr("below 2 (scheduling.queue_capacity)")));
}

TEST_F(SchedulerTest, QueueDepthNeverExceedsCapacityPlusLaterSegments) {
  constexpr int kCapacity = 3;
  constexpr int kLater = 2;
  Start(Capacity(kCapacity));
  HoldWorker();

  int admitted = 0;
  for (int i = 0; i < 20; ++i) {
    if (Submit("first-" + std::to_string(i)).ok()) ++admitted;
    EXPECT_LE(scheduler_->QueueDepth(), static_cast<size_t>(kCapacity));
  }
  for (int i = 0; i < kLater; ++i) ASSERT_TRUE(Submit("later-" + std::to_string(i), Later()).ok());
  for (int i = 20; i < 40; ++i) EXPECT_FALSE(Submit("first-" + std::to_string(i)).ok());

  EXPECT_EQ(admitted, kCapacity);
  EXPECT_EQ(scheduler_->QueueDepth(), static_cast<size_t>(kCapacity + kLater));
}

TEST_F(SchedulerTest, AdmissionReopensOnceTheQueueDrains) {
  Start(Capacity(1));
  HoldWorker();
  ASSERT_TRUE(Submit("queued").ok());
  ASSERT_FALSE(Submit("rejected").ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(2));

  EXPECT_TRUE(Submit("admitted").ok());
  ASSERT_TRUE(outcomes_.WaitFor("admitted"));
  EXPECT_TRUE(outcomes_.Get("admitted").status.ok());
}

}  // namespace
}  // namespace voxserve::scheduler
