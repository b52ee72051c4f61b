// The scheduler's step loop for streaming engines: segments join and leave between steps, at most
// max_active advance together, each chunk reaches its segment as it comes and in order, every
// segment ends exactly once (ok, error, cancelled, deadline, draining, lost), and admission,
// priority and drain mean what they mean for whole-segment engines. The fake engine's step gate
// orders every event; nothing here sleeps to synchronize.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "core/error.h"
#include "scheduler/scheduler.h"
#include "scheduler_test_support.h"
#include "support/fake_streaming_engine.h"

namespace voxserve::scheduler {
namespace {

using test_support::FakeStreamingEngine;
using test_support::FakeStreamingOptions;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Every chunk each task received, by task name, and whether `done` had run when it came.
class ChunkLog {
 public:
  SegmentChunk Track(const std::string& name, Outcomes& outcomes) {
    return [this, name, &outcomes](audio::PcmAudio chunk) {
      std::lock_guard lock(mutex_);
      Chunks& chunks = chunks_[name];
      chunks.first_values.push_back(chunk.samples.empty() ? -1.0f : chunk.samples.front());
      if (outcomes.CallsOf(name) > 0) ++chunks.after_done;
      changed_.notify_all();
    };
  }
  bool WaitForChunks(const std::string& name, size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit,
                             [&] { return chunks_[name].first_values.size() >= count; });
  }
  // The value of each chunk (= its index in the segment, by the fake engine's rule).
  std::vector<float> Values(const std::string& name) {
    std::lock_guard lock(mutex_);
    return chunks_[name].first_values;
  }
  int AfterDone(const std::string& name) {
    std::lock_guard lock(mutex_);
    return chunks_[name].after_done;
  }

 private:
  struct Chunks {
    std::vector<float> first_values;
    int after_done = 0;
  };
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Chunks> chunks_;
};

class StepLoopTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (engine_) engine_->OpenGate();
    scheduler_.reset();
  }

  void Start(int max_active, FakeStreamingOptions options = {}, int queue_capacity = 64) {
    engine_ = std::make_shared<FakeStreamingEngine>(std::move(options));
    SchedulerConfig config;
    config.instances = 1;
    config.max_active = max_active;
    config.queue_capacity = queue_capacity;
    auto scheduler = Scheduler::Create(engine_, config, {});
    ASSERT_TRUE(scheduler.ok()) << scheduler.status();
    scheduler_ = std::move(*scheduler);
  }

  // A segment named by its text (one chunk per word), its chunks logged.
  absl::Status Submit(const std::string& text, const TaskSpec& spec = {}) {
    SegmentTask task;
    task.text = text;
    task.voice_id = spec.voice;
    task.first_of_request = spec.first;
    task.deadline = spec.deadline;
    task.cancellation = spec.cancellation;
    task.done = outcomes_.Track(text);
    task.on_chunk = chunks_.Track(text, outcomes_);
    return scheduler_->Submit(std::move(task));
  }

  Outcomes outcomes_;  // first: outlive the scheduler whose callbacks record into them
  ChunkLog chunks_;
  std::shared_ptr<FakeStreamingEngine> engine_;
  std::unique_ptr<Scheduler> scheduler_;
};

TEST_F(StepLoopTest, ChunksArriveInOrderOneStepAtATimeBeforeTheSegmentEnds) {
  Start(4);
  ASSERT_TRUE(Submit("w0 w1 w2").ok());
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  engine_->AllowSteps(1);
  ASSERT_TRUE(chunks_.WaitForChunks("w0 w1 w2", 1));
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(2));

  // The first chunk is out while the segment is still being generated.
  EXPECT_EQ(outcomes_.CallsOf("w0 w1 w2"), 0);
  engine_->AllowSteps(2);
  ASSERT_TRUE(outcomes_.WaitFor("w0 w1 w2"));

  EXPECT_THAT(chunks_.Values("w0 w1 w2"), ElementsAre(0.0f, 1.0f, 2.0f));
  Outcome outcome = outcomes_.Get("w0 w1 w2");
  EXPECT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.samples, 0u);  // the audio went as chunks
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_EQ(chunks_.AfterDone("w0 w1 w2"), 0);
}

TEST_F(StepLoopTest, WithoutAChunkCallbackDoneGetsTheWholeSegment) {
  Start(4, {.gated = false});
  SegmentTask task;
  task.text = "a b c";
  task.voice_id = "alice";
  task.done = outcomes_.Track("a b c");
  ASSERT_TRUE(scheduler_->Submit(std::move(task)).ok());
  ASSERT_TRUE(outcomes_.WaitFor("a b c"));
  EXPECT_TRUE(outcomes_.Get("a b c").status.ok());
  EXPECT_EQ(outcomes_.Get("a b c").samples, 30u);  // 3 chunks of 10 samples
}

TEST_F(StepLoopTest, ASegmentJoinsBetweenStepsWhileAnotherIsMidSentence) {
  Start(4);
  ASSERT_TRUE(Submit("a1 a2 a3 a4").ok());
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  engine_->AllowSteps(1);
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(2));  // step 2's set is decided: only A
  ASSERT_TRUE(Submit("b1 b2").ok());
  engine_->AllowSteps(3);
  ASSERT_TRUE(outcomes_.WaitFor("b1 b2"));
  ASSERT_TRUE(engine_->WaitForSteps(4));

  std::vector<std::vector<std::string>> steps = engine_->steps();
  EXPECT_THAT(steps[0], ElementsAre("a1 a2 a3 a4"));
  EXPECT_THAT(steps[1], ElementsAre("a1 a2 a3 a4"));
  EXPECT_THAT(steps[2], ElementsAre("a1 a2 a3 a4", "b1 b2"));  // joined A mid-sentence
  EXPECT_THAT(steps[3], ElementsAre("a1 a2 a3 a4", "b1 b2"));  // B's last step
  ASSERT_TRUE(outcomes_.WaitFor("a1 a2 a3 a4"));
  EXPECT_THAT(chunks_.Values("b1 b2"), ElementsAre(0.0f, 1.0f));
}

TEST_F(StepLoopTest, NoMoreThanMaxActiveAdvanceTogetherAndTheRestJoinAsSlotsFree) {
  Start(2);
  ASSERT_TRUE(Submit("a a a").ok());
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  for (const char* text : {"b b", "c c c c", "d", "e e"}) ASSERT_TRUE(Submit(text).ok());
  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(5));

  for (const char* text : {"a a a", "b b", "c c c c", "d", "e e"}) {
    EXPECT_EQ(outcomes_.CallsOf(text), 1) << text;
    EXPECT_TRUE(outcomes_.Get(text).status.ok()) << text;
  }
  // Each segment joins at the first step after a slot frees, in queue order.
  EXPECT_THAT(
      engine_->steps(),
      ElementsAre(ElementsAre("a a a"), ElementsAre("a a a", "b b"), ElementsAre("a a a", "b b"),
                  ElementsAre("c c c c", "d"), ElementsAre("c c c c", "e e"),
                  ElementsAre("c c c c", "e e"), ElementsAre("c c c c")));
  EXPECT_EQ(engine_->max_active_seen(), 2u);
}

TEST_F(StepLoopTest, AConfiguredMaxActiveIsCappedByTheEngines) {
  Start(50, {.max_active = 3, .gated = false});
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(Submit("s" + std::to_string(i) + " x x").ok());
  ASSERT_TRUE(outcomes_.WaitForCount(8));
  EXPECT_EQ(engine_->max_active_seen(), 3u);
}

TEST_F(StepLoopTest, CancellationMidSentenceEndsItAndFreesTheSlotAtTheNextStep) {
  Start(1);
  auto token = std::make_shared<core::CancellationToken>();
  ASSERT_TRUE(Submit("a1 a2 a3 a4 a5", {.cancellation = token}).ok());
  ASSERT_TRUE(Submit("b1 b2").ok());
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  engine_->AllowSteps(1);
  ASSERT_TRUE(chunks_.WaitForChunks("a1 a2 a3 a4 a5", 1));
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(2));  // A is in step 2 already

  token->Cancel();
  engine_->AllowSteps(3);
  ASSERT_TRUE(outcomes_.WaitFor("b1 b2"));

  Outcome a = outcomes_.Get("a1 a2 a3 a4 a5");
  EXPECT_EQ(a.status.code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(a.calls, 1);
  // Step 2's chunk of A came after the cancellation: dropped, as all later ones.
  EXPECT_THAT(chunks_.Values("a1 a2 a3 a4 a5"), ElementsAre(0.0f));
  std::vector<std::vector<std::string>> steps = engine_->steps();
  ASSERT_GE(steps.size(), 3u);
  EXPECT_THAT(steps[2], ElementsAre("b1 b2"));  // the freed slot, taken at the next step
  EXPECT_THAT(engine_->released(), ElementsAre("a1 a2 a3 a4 a5"));
  EXPECT_TRUE(outcomes_.Get("b1 b2").status.ok());
}

TEST_F(StepLoopTest, ADeadlineThatPassesMidSentenceEndsTheSegmentWithDeadlineExceeded) {
  Start(2);
  // Far enough ahead that the first step surely starts before it, even on a loaded machine.
  const core::Clock::time_point deadline = core::Clock::now() + std::chrono::seconds(1);
  ASSERT_TRUE(Submit("a1 a2 a3", {.deadline = deadline}).ok());
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  engine_->AllowSteps(1);
  ASSERT_TRUE(chunks_.WaitForChunks("a1 a2 a3", 1));
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(2));
  std::this_thread::sleep_until(deadline);  // the time under test passes; no ordering relies on it
  engine_->AllowSteps(1);
  ASSERT_TRUE(outcomes_.WaitFor("a1 a2 a3"));

  Outcome a = outcomes_.Get("a1 a2 a3");
  EXPECT_EQ(a.status.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(a.status.message()), HasSubstr("during synthesis"));
  EXPECT_THAT(chunks_.Values("a1 a2 a3"), ElementsAre(0.0f));
  EXPECT_EQ(a.calls, 1);
}

TEST_F(StepLoopTest, AnEngineErrorMidSentenceEndsThatSegmentOnlyAfterItsEarlierChunks) {
  Start(2, {.gated = false});
  ASSERT_TRUE(Submit("a1 a2 FAIL a4").ok());
  ASSERT_TRUE(Submit("b1 b2 b3").ok());
  ASSERT_TRUE(outcomes_.WaitForCount(2));
  EXPECT_EQ(outcomes_.CodeOf("a1 a2 FAIL a4"), absl::StatusCode::kInternal);
  EXPECT_THAT(chunks_.Values("a1 a2 FAIL a4"), ElementsAre(0.0f, 1.0f));
  EXPECT_TRUE(outcomes_.Get("b1 b2 b3").status.ok());
  EXPECT_THAT(chunks_.Values("b1 b2 b3"), ElementsAre(0.0f, 1.0f, 2.0f));
}

TEST_F(StepLoopTest, FirstSegmentsJoinBeforeEarlierQueuedLaterSegments) {
  Start(1);
  ASSERT_TRUE(Submit("hold").ok());
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  ASSERT_TRUE(Submit("later", Later()).ok());
  ASSERT_TRUE(Submit("first").ok());
  engine_->OpenGate();
  ASSERT_TRUE(outcomes_.WaitForCount(3));
  std::vector<std::vector<std::string>> steps = engine_->steps();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_THAT(steps[1], ElementsAre("first"));
  EXPECT_THAT(steps[2], ElementsAre("later"));
}

TEST_F(StepLoopTest, AFullQueueRejectsNewRequestsWithQueueFullAndARetryHint) {
  Start(1, {}, /*queue_capacity=*/1);
  ASSERT_TRUE(Submit("active").ok());
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  ASSERT_TRUE(Submit("queued").ok());

  absl::Status rejected = Submit("refused");
  EXPECT_EQ(rejected.code(), absl::StatusCode::kResourceExhausted);
  core::ErrorDetail detail = core::DetailOf(rejected);
  EXPECT_EQ(detail.reason, core::ErrorReason::kQueueFull);
  EXPECT_TRUE(detail.retry_after_seconds.has_value());
  // A later segment of an admitted request is still taken.
  EXPECT_TRUE(Submit("continues", Later()).ok());
}

TEST_F(StepLoopTest, StopEndsActiveAndQueuedSegmentsOnceWithDraining) {
  Start(1);
  ASSERT_TRUE(Submit("a1 a2 a3").ok());
  ASSERT_TRUE(Submit("b1").ok());
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  engine_->AllowSteps(1);
  ASSERT_TRUE(chunks_.WaitForChunks("a1 a2 a3", 1));
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(2));

  scheduler_->Stop();
  engine_->OpenGate();  // step 2 finishes; the loop then sees the stop
  ASSERT_TRUE(outcomes_.WaitForCount(2));
  scheduler_->Shutdown();

  EXPECT_EQ(outcomes_.CodeOf("a1 a2 a3"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(outcomes_.CallsOf("a1 a2 a3"), 1);
  EXPECT_EQ(outcomes_.CodeOf("b1"), absl::StatusCode::kUnavailable);
  EXPECT_EQ(outcomes_.CallsOf("b1"), 1);
  EXPECT_EQ(core::DetailOf(outcomes_.Get("b1").status).reason, core::ErrorReason::kDraining);
  EXPECT_EQ(Submit("late").code(), absl::StatusCode::kUnavailable);
}

TEST_F(StepLoopTest, EverySegmentEndsExactlyOnceUnderChurn) {
  Start(3, {.gated = false});
  std::vector<std::shared_ptr<core::CancellationToken>> tokens;
  for (int i = 0; i < 40; ++i) {
    auto token = std::make_shared<core::CancellationToken>();
    tokens.push_back(token);
    std::string text = "s" + std::to_string(i) + " x x x";
    ASSERT_TRUE(Submit(text, {.first = i % 2 == 0, .cancellation = token}).ok());
    if (i % 3 == 0) tokens[i / 2]->Cancel();
  }
  ASSERT_TRUE(outcomes_.WaitForCount(40));
  scheduler_->Shutdown();
  for (int i = 0; i < 40; ++i) {
    std::string text = "s" + std::to_string(i) + " x x x";
    EXPECT_EQ(outcomes_.CallsOf(text), 1) << text;
    EXPECT_EQ(chunks_.AfterDone(text), 0) << text;
    std::vector<float> values = chunks_.Values(text);
    for (size_t k = 0; k < values.size(); ++k) EXPECT_EQ(values[k], static_cast<float>(k));
    if (outcomes_.Get(text).status.ok()) {
      EXPECT_EQ(values.size(), 4u) << text;
    }
  }
  EXPECT_LE(engine_->max_active_seen(), 3u);
}

TEST_F(StepLoopTest, FirstChunkOfEachSegmentComesBeforeItsEndUnderLoad) {
  Start(8, {.gated = false});
  for (int i = 0; i < 24; ++i) ASSERT_TRUE(Submit("load" + std::to_string(i) + " a b c d e").ok());
  ASSERT_TRUE(outcomes_.WaitForCount(24));
  for (int i = 0; i < 24; ++i) {
    std::string text = "load" + std::to_string(i) + " a b c d e";
    EXPECT_EQ(chunks_.Values(text).size(), 6u) << text;  // all before done (AfterDone == 0)
    EXPECT_EQ(chunks_.AfterDone(text), 0) << text;
  }
}

}  // namespace
}  // namespace voxserve::scheduler
