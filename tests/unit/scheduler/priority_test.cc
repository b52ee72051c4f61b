// Priority between requests: first segments go ahead of later segments queued before them
// (time to first audio), but only by first_segment_lead_ms, so later segments never starve.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "scheduler/scheduler.h"
#include "scheduler_test_support.h"

namespace voxserve::scheduler {
namespace {

using ::testing::ElementsAre;

TEST_F(SchedulerTest, FirstSegmentOvertakesLaterSegmentsQueuedBeforeIt) {
  Start(OneAtATime());  // first_segment_lead_ms defaults to 2 s, far more than this test takes
  HoldWorker();
  ASSERT_TRUE(Submit("later-1", Later()).ok());
  ASSERT_TRUE(Submit("later-2", Later()).ok());
  ASSERT_TRUE(Submit("first", {}).ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(4));

  EXPECT_THAT(CallsAfterHold(),
              ElementsAre(ElementsAre("first"), ElementsAre("later-1"), ElementsAre("later-2")));
}

TEST_F(SchedulerTest, SegmentsOfTheSameKindKeepArrivalOrder) {
  Start(OneAtATime());
  HoldWorker();
  ASSERT_TRUE(Submit("first-1").ok());
  ASSERT_TRUE(Submit("later-1", Later()).ok());
  ASSERT_TRUE(Submit("first-2").ok());
  ASSERT_TRUE(Submit("later-2", Later()).ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(5));

  EXPECT_THAT(engine_->texts(), ElementsAre("hold", "first-1", "first-2", "later-1", "later-2"));
}

TEST_F(SchedulerTest, LaterSegmentIsNotOvertakenOnceItHasWaitedTheLead) {
  SchedulerConfig config = OneAtATime();
  config.first_segment_lead_ms = 20;
  Start(config);
  HoldWorker();
  ASSERT_TRUE(Submit("later", Later()).ok());
  // Setup, not a speed claim: let the later segment wait out the whole lead (with margin) so a
  // new first segment may no longer jump it.
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  ASSERT_TRUE(Submit("first").ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(3));

  EXPECT_THAT(engine_->texts(), ElementsAre("hold", "later", "first"));
}

TEST_F(SchedulerTest, ZeroLeadServesStrictlyInArrivalOrder) {
  SchedulerConfig config = OneAtATime();
  config.first_segment_lead_ms = 0;
  Start(config);
  HoldWorker();
  ASSERT_TRUE(Submit("later", Later()).ok());
  ASSERT_TRUE(Submit("first").ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(3));

  EXPECT_THAT(engine_->texts(), ElementsAre("hold", "later", "first"));
}

// A streamed response's later segment (SynthesisJob sets listener_runs_out once its first audio
// went out) waits by when its listener runs out of audio, not by when it came.
TEST_F(SchedulerTest, LaterSegmentsOfStreamsGoByWhenTheirListenerRunsOutOfAudio) {
  Start(OneAtATime());
  HoldWorker();
  const core::Clock::time_point now = core::Clock::now();
  auto streamed = [&](std::chrono::seconds runs_out_in) {
    TaskSpec spec = Later();
    spec.listener_runs_out = now + runs_out_in;
    return spec;
  };
  ASSERT_TRUE(Submit("ten-seconds-left", streamed(std::chrono::seconds(10))).ok());
  ASSERT_TRUE(Submit("whole-file-later", Later()).ok());
  ASSERT_TRUE(Submit("one-second-left", streamed(std::chrono::seconds(1))).ok());
  ASSERT_TRUE(Submit("ran-dry", streamed(std::chrono::seconds(-1))).ok());
  ASSERT_TRUE(Submit("first").ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(6));

  // The first segment leads by first_segment_lead_ms (2 s), ahead of the listener that ran dry a
  // second ago too; then later segments by when their listener runs out, one without a listener
  // (a whole file's) at its arrival.
  EXPECT_THAT(engine_->texts(), ElementsAre("hold", "first", "ran-dry", "whole-file-later",
                                            "one-second-left", "ten-seconds-left"));
}

TEST_F(SchedulerTest, FirstSegmentLeadsTheBatchItJoins) {
  SchedulerConfig config = OneAtATime();
  config.max_batch_size = 2;
  test_support::FakeEngineOptions options;
  options.max_batch_size = 2;
  Start(config, options);
  HoldWorker();
  ASSERT_TRUE(Submit("later-1", Later()).ok());
  ASSERT_TRUE(Submit("later-2", Later()).ok());
  ASSERT_TRUE(Submit("later-3", Later()).ok());
  ASSERT_TRUE(Submit("first").ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(5));

  EXPECT_THAT(CallsAfterHold(),
              ElementsAre(ElementsAre("first", "later-1"), ElementsAre("later-2", "later-3")));
}

}  // namespace
}  // namespace voxserve::scheduler
