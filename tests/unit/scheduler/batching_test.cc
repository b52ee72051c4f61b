// Batch formation: when a batch leaves (full, or its oldest segment has waited
// max_queue_delay_ms) and which segments may share it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/scheduler.h"
#include "scheduler_test_support.h"

namespace voxserve::scheduler {
namespace {

using ::testing::ElementsAre;
using ::testing::Ge;
using ::testing::Le;

SchedulerConfig Batching(int max_batch_size, int max_queue_delay_ms) {
  SchedulerConfig config;
  config.instances = 1;
  config.max_batch_size = max_batch_size;
  config.max_queue_delay_ms = max_queue_delay_ms;
  return config;
}

test_support::FakeEngineOptions EngineBatching(int max_batch_size, bool same_voice = false) {
  test_support::FakeEngineOptions options;
  options.max_batch_size = max_batch_size;
  options.batch_requires_same_voice = same_voice;
  return options;
}

TEST_F(SchedulerTest, QueuedSegmentsLeaveInBatchesOfAtMostMaxBatchSize) {
  Start(Batching(4, 0), EngineBatching(4));
  HoldWorker();
  for (const char* text : {"s0", "s1", "s2", "s3", "s4", "s5"}) ASSERT_TRUE(Submit(text).ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(7));

  EXPECT_THAT(CallsAfterHold(),
              ElementsAre(ElementsAre("s0", "s1", "s2", "s3"), ElementsAre("s4", "s5")));
  EXPECT_EQ(outcomes_.Get("s0").timing.batch_size, 4);
  EXPECT_EQ(outcomes_.Get("s5").timing.batch_size, 2);
}

TEST_F(SchedulerTest, EngineMaximumCapsTheConfiguredBatchSize) {
  Start(Batching(8, 0), EngineBatching(2));
  HoldWorker();
  for (const char* text : {"s0", "s1", "s2", "s3", "s4"}) ASSERT_TRUE(Submit(text).ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(6));

  EXPECT_THAT(engine_->batch_sizes(), ElementsAre(1, 2, 2, 1));
}

TEST_F(SchedulerTest, FullBatchLeavesWithoutWaitingForTheDelay) {
  // The delay is far longer than the wait limit: only a full batch can leave in time.
  Start(Batching(4, 10'000), EngineBatching(4));
  for (const char* text : {"s0", "s1", "s2", "s3"}) ASSERT_TRUE(Submit(text).ok());

  ASSERT_TRUE(engine_->WaitForCalls(1));
  EXPECT_THAT(CallsAfterHold(), ElementsAre(ElementsAre("s0", "s1", "s2", "s3")));
}

TEST_F(SchedulerTest, LoneSegmentWaitsForCompanyAboutMaxQueueDelay) {
  constexpr auto kDelay = std::chrono::milliseconds(100);
  // Generous: the bound is "the delay, not much more", not a latency claim.
  constexpr auto kTolerance = std::chrono::milliseconds(500);
  Start(Batching(4, static_cast<int>(kDelay.count())), EngineBatching(4));

  ASSERT_TRUE(Submit("alone").ok());
  ASSERT_TRUE(outcomes_.WaitFor("alone"));

  Outcome outcome = outcomes_.Get("alone");
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.timing.batch_size, 1);
  auto waited = outcome.timing.started - outcome.timing.enqueued;
  EXPECT_THAT(waited, Ge(kDelay));
  EXPECT_THAT(waited, Le(kDelay + kTolerance));
}

TEST_F(SchedulerTest, PartialBatchTakesEverythingThatArrivedWithinTheDelay) {
  // Three back-to-back submits take microseconds; the delay leaves ample room for them.
  Start(Batching(4, 200), EngineBatching(4));
  for (const char* text : {"s0", "s1", "s2"}) ASSERT_TRUE(Submit(text).ok());

  ASSERT_TRUE(outcomes_.WaitForCount(3));
  EXPECT_THAT(CallsAfterHold(), ElementsAre(ElementsAre("s0", "s1", "s2")));
}

TEST_F(SchedulerTest, ZeroDelayDispatchesALoneSegmentAtOnce) {
  Start(Batching(4, 0), EngineBatching(4));

  ASSERT_TRUE(Submit("alone").ok());

  // With any real delay the engine would see nothing until a partner arrived or time ran out;
  // kWaitLimit only guards against a hang.
  ASSERT_TRUE(engine_->WaitForCalls(1));
  EXPECT_THAT(engine_->batch_sizes(), ElementsAre(1));
}

TEST_F(SchedulerTest, SameVoiceEngineGetsOneVoicePerBatch) {
  Start(Batching(4, 0), EngineBatching(4, /*same_voice=*/true));
  HoldWorker();
  ASSERT_TRUE(Submit("a1", Voice("alice")).ok());
  ASSERT_TRUE(Submit("b1", Voice("bob")).ok());
  ASSERT_TRUE(Submit("a2", Voice("alice")).ok());
  ASSERT_TRUE(Submit("b2", Voice("bob")).ok());
  ASSERT_TRUE(Submit("a3", Voice("alice")).ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(6));

  EXPECT_THAT(CallsAfterHold(),
              ElementsAre(ElementsAre("a1", "a2", "a3"), ElementsAre("b1", "b2")));
  for (const test_support::EngineCall& call : engine_->calls()) {
    for (const std::string& voice : call.voice_ids) EXPECT_EQ(voice, call.voice_ids.front());
  }
}

TEST_F(SchedulerTest, VoiceAgnosticEngineMixesVoicesInArrivalOrder) {
  Start(Batching(4, 0), EngineBatching(4, /*same_voice=*/false));
  HoldWorker();
  ASSERT_TRUE(Submit("a1", Voice("alice")).ok());
  ASSERT_TRUE(Submit("b1", Voice("bob")).ok());
  ASSERT_TRUE(Submit("a2", Voice("alice")).ok());
  ASSERT_TRUE(Submit("b2", Voice("bob")).ok());
  ASSERT_TRUE(Submit("a3", Voice("alice")).ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(6));

  EXPECT_THAT(CallsAfterHold(),
              ElementsAre(ElementsAre("a1", "b1", "a2", "b2"), ElementsAre("a3")));
  EXPECT_THAT(engine_->calls()[1].voice_ids, ElementsAre("alice", "bob", "alice", "bob"));
}

TEST_F(SchedulerTest, EngineReceivesTextVoiceAndSpeedAndResultGoesToItsTask) {
  Start(OneAtATime());
  SegmentTask task = Task("hello there", Voice("bob"));
  task.speed = 1.5;
  ASSERT_TRUE(scheduler_->Submit(std::move(task)).ok());
  ASSERT_TRUE(outcomes_.WaitFor("hello there"));

  std::vector<test_support::EngineCall> calls = engine_->calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_THAT(calls[0].texts, ElementsAre("hello there"));
  EXPECT_THAT(calls[0].voice_ids, ElementsAre("bob"));
  EXPECT_THAT(calls[0].speeds, ElementsAre(1.5));
  Outcome outcome = outcomes_.Get("hello there");
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.samples, std::string("hello there").size());
  EXPECT_LE(outcome.timing.enqueued, outcome.timing.started);
  EXPECT_LE(outcome.timing.started, outcome.timing.finished);
}

TEST_F(SchedulerTest, InstancesRunBatchesConcurrently) {
  SchedulerConfig config = OneAtATime();
  config.instances = 3;
  Start(config);
  engine_->CloseGate();
  for (const char* text : {"s0", "s1", "s2"}) ASSERT_TRUE(Submit(text).ok());

  // Three calls inside the engine at once, all held by the gate: one per worker.
  ASSERT_TRUE(engine_->WaitForCalls(3));
  EXPECT_EQ(engine_->in_flight(), 3u);

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(3));
}

}  // namespace
}  // namespace voxserve::scheduler
