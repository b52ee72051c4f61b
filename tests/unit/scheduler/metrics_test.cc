// The scheduler's metrics, read from a real registry: queue depth, batch sizes, queue wait and
// dropped segments by reason.
#include "core/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scheduler/scheduler.h"
#include "scheduler/scheduler_metrics.h"
#include "scheduler_test_support.h"

namespace voxserve::scheduler {
namespace {

using ::testing::HasSubstr;

class SchedulerMetricsTest : public SchedulerTest {
 protected:
  SchedulerMetricsTest() : families_(registry_), metrics_(families_.ForModel("fake")) {}

  void StartWithBatches(int max_batch_size) {
    SchedulerConfig config = OneAtATime();
    config.max_batch_size = max_batch_size;
    test_support::FakeEngineOptions options;
    options.max_batch_size = max_batch_size;
    Start(config, options, metrics_);
  }

  core::MetricsRegistry registry_;
  SchedulerMetricFamilies families_;
  ModelSchedulerMetrics metrics_;
};

TEST_F(SchedulerMetricsTest, QueueDepthFollowsTheQueue) {
  StartWithBatches(4);
  HoldWorker();
  EXPECT_EQ(metrics_.queue_depth->Value(), 0);
  for (const char* text : {"s0", "s1", "s2"}) ASSERT_TRUE(Submit(text).ok());

  EXPECT_EQ(metrics_.queue_depth->Value(), 3);

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(4));
  EXPECT_EQ(metrics_.queue_depth->Value(), 0);
}

TEST_F(SchedulerMetricsTest, BatchSizeAndQueueWaitAreObservedPerEngineCall) {
  StartWithBatches(4);
  HoldWorker();
  for (const char* text : {"s0", "s1", "s2", "s3", "s4", "s5"}) ASSERT_TRUE(Submit(text).ok());

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(7));

  // Engine calls of 1 (hold), 4 and 2.
  core::Histogram::Snapshot batches = metrics_.batch_size->Read();
  EXPECT_EQ(batches.count, 3u);
  EXPECT_EQ(batches.sum, 7);
  ASSERT_EQ(batches.upper_bounds.at(0), 1);
  EXPECT_EQ(batches.cumulative_counts.at(0), 1u);            // le=1
  EXPECT_EQ(batches.cumulative_counts.at(1), 2u);            // le=2
  EXPECT_EQ(batches.cumulative_counts.at(2), 3u);            // le=4
  EXPECT_EQ(metrics_.queue_wait_seconds->Read().count, 7u);  // one per segment
}

TEST_F(SchedulerMetricsTest, DroppedSegmentsAreCountedByReason) {
  StartWithBatches(1);
  HoldWorker();
  auto token = std::make_shared<core::CancellationToken>();
  TaskSpec cancelled;
  cancelled.cancellation = token;
  TaskSpec expired;
  expired.deadline = core::Clock::now() - std::chrono::milliseconds(1);
  ASSERT_TRUE(Submit("cancelled", cancelled).ok());
  ASSERT_TRUE(Submit("expired", expired).ok());
  token->Cancel();

  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(3));

  EXPECT_EQ(metrics_.dropped_cancelled->Value(), 1);
  EXPECT_EQ(metrics_.dropped_expired->Value(), 1);
  EXPECT_EQ(metrics_.batch_size->Read().count, 1u);  // only "hold" reached the engine
}

TEST_F(SchedulerMetricsTest, SweepUpdatesQueueDepthAndDroppedCount) {
  StartWithBatches(1);
  HoldWorker();
  auto token = std::make_shared<core::CancellationToken>();
  TaskSpec cancelled;
  cancelled.cancellation = token;
  ASSERT_TRUE(Submit("cancelled", cancelled).ok());
  ASSERT_TRUE(Submit("alive").ok());
  token->Cancel();

  scheduler_->SweepDeadSegments();
  ASSERT_TRUE(outcomes_.WaitFor("cancelled"));

  EXPECT_EQ(metrics_.queue_depth->Value(), 1);
  EXPECT_EQ(metrics_.dropped_cancelled->Value(), 1);
}

TEST_F(SchedulerMetricsTest, ExpositionCarriesTheModelLabel) {
  StartWithBatches(1);
  ASSERT_TRUE(Submit("s0").ok());
  ASSERT_TRUE(outcomes_.WaitFor("s0"));

  std::string text = registry_.RenderText();

  EXPECT_THAT(text, HasSubstr("voxserve_queue_depth{model=\"fake\"} 0"));
  EXPECT_THAT(text, HasSubstr("voxserve_batch_size_count{model=\"fake\"} 1"));
  EXPECT_THAT(text,
              HasSubstr("voxserve_segments_dropped_total{model=\"fake\",reason=\"cancelled\"} 0"));
}

// A streaming instance's runner figures: gauges follow the last step, totals become counter
// increments, and a runner made again (after a loss) counting from 0 adds its new total.
TEST(StreamInstanceMetricsTest, GaugesFollowTheRunnerAndTotalsSurviveARunnerReplaced) {
  core::MetricsRegistry registry;
  SchedulerMetricFamilies families(registry);
  StreamInstanceMetrics stream = families.ForModel("cv").instance_stream(1);
  stream.Publish({2, 1, 40, 3, 5, 9});
  stream.Publish({1, 0, 70, 1, 8, 15});
  EXPECT_EQ(stream.decoding->Value(), 1);
  EXPECT_EQ(stream.prefill_waiting->Value(), 0);
  EXPECT_EQ(stream.vocoder_pending->Value(), 1);
  EXPECT_EQ(stream.tokens->Value(), 70);
  EXPECT_EQ(stream.vocoder_jobs->Value(), 8);
  EXPECT_EQ(stream.vocoder_batched->Value(), 15);
  stream.Publish({});                   // the instance was lost: its runner is gone
  stream.Publish({1, 0, 12, 0, 1, 2});  // a new runner, from 0
  EXPECT_EQ(stream.tokens->Value(), 82);
  EXPECT_EQ(stream.vocoder_jobs->Value(), 9);
  EXPECT_EQ(stream.decoding->Value(), 1);
  EXPECT_THAT(registry.RenderText(),
              HasSubstr("voxserve_stream_tokens_total{model=\"cv\",worker=\"1\"} 82"));
}

}  // namespace
}  // namespace voxserve::scheduler
