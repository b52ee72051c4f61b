// Under concurrent submitting, cancelling, sweeping and stopping, every accepted task's `done`
// runs exactly once and no refused task's `done` ever runs. Run it under ThreadSanitizer too.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "scheduler/scheduler.h"
#include "scheduler_test_support.h"
#include "support/fake_engine.h"

namespace voxserve::scheduler {
namespace {

// One task's fate as the stress test tracks it, without names or maps in the hot path.
struct Tally {
  std::atomic<int> done_calls{0};
  std::atomic<bool> accepted{false};
};

struct StressResult {
  int accepted = 0;
  int refused = 0;
};

// `threads` submitters push `per_thread` tasks each: a mix of first and later segments, two
// voices, some cancelled right after submission, some with deadlines that pass in the queue. A
// sweeper calls SweepDeadSegments all along. With stop_midway the scheduler stops while the
// submitters are still running.
StressResult RunStress(Scheduler& scheduler, std::vector<Tally>& tallies, int threads,
                       int per_thread, bool stop_midway) {
  std::atomic<bool> submitting{true};
  std::thread sweeper([&] {
    while (submitting.load()) {
      scheduler.SweepDeadSegments();
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> submitters;
  for (int t = 0; t < threads; ++t) {
    submitters.emplace_back([&, t] {
      std::mt19937 random(static_cast<unsigned>(t) * 7919u + 1);
      for (int i = 0; i < per_thread; ++i) {
        Tally& tally = tallies[static_cast<size_t>(t * per_thread + i)];
        auto token = std::make_shared<core::CancellationToken>();
        SegmentTask task;
        task.text = "segment " + std::to_string(t) + "/" + std::to_string(i);
        task.voice_id = random() % 2 ? "alice" : "bob";
        task.first_of_request = random() % 3 == 0;
        task.cancellation = token;
        if (random() % 5 == 0) {
          task.deadline = core::Clock::now() + std::chrono::microseconds(random() % 2000);
        }
        task.done = [&tally](absl::StatusOr<audio::PcmAudio>, const SegmentTiming&) {
          tally.done_calls.fetch_add(1);
        };
        bool accepted = scheduler.Submit(std::move(task)).ok();
        tally.accepted.store(accepted);
        if (accepted && random() % 4 == 0) token->Cancel();
        if (stop_midway && t == 0 && i == per_thread / 2) scheduler.Stop();
      }
    });
  }
  for (std::thread& submitter : submitters) submitter.join();
  submitting.store(false);
  sweeper.join();
  scheduler.Shutdown();

  StressResult result;
  for (const Tally& tally : tallies) (tally.accepted.load() ? result.accepted : result.refused)++;
  return result;
}

SchedulerConfig StressConfig() {
  SchedulerConfig config;
  config.instances = 3;
  config.max_batch_size = 4;
  config.max_queue_delay_ms = 1;
  config.queue_capacity = 16;  // small, so admission control refuses some first segments
  config.first_segment_lead_ms = 5;
  return config;
}

std::shared_ptr<test_support::FakeEngine> StressEngine() {
  test_support::FakeEngineOptions options;
  options.max_batch_size = 4;
  options.batch_requires_same_voice = true;
  return std::make_shared<test_support::FakeEngine>(options);
}

TEST(SchedulerStressTest, EveryAcceptedTaskEndsExactlyOnce) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  std::vector<Tally> tallies(kThreads * kPerThread);
  auto engine = StressEngine();
  auto scheduler = Scheduler::Create(engine, StressConfig(), {});
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();

  StressResult result = RunStress(**scheduler, tallies, kThreads, kPerThread, false);

  EXPECT_GT(result.accepted, 0);
  for (size_t i = 0; i < tallies.size(); ++i) {
    ASSERT_EQ(tallies[i].done_calls.load(), tallies[i].accepted.load() ? 1 : 0) << "task " << i;
  }
  EXPECT_EQ((*scheduler)->QueueDepth(), 0u);
}

TEST(SchedulerStressTest, EveryAcceptedTaskEndsExactlyOnceWhenStoppedMidway) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  std::vector<Tally> tallies(kThreads * kPerThread);
  auto engine = StressEngine();
  auto scheduler = Scheduler::Create(engine, StressConfig(), {});
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();

  StressResult result = RunStress(**scheduler, tallies, kThreads, kPerThread, true);

  EXPECT_GT(result.refused, 0);  // at least everything thread 0 submitted after Stop()
  for (size_t i = 0; i < tallies.size(); ++i) {
    ASSERT_EQ(tallies[i].done_calls.load(), tallies[i].accepted.load() ? 1 : 0) << "task " << i;
  }
}

TEST(SchedulerStressTest, DeadSegmentsNeverReachTheEngine) {
  // Two of every three tasks are cancelled before submission or already expired, mixed with
  // live ones so that dead segments also sit inside batches: whatever the interleaving, no
  // dead segment may reach the engine.
  constexpr int kThreads = 3;
  constexpr int kPerThread = 300;
  auto engine = StressEngine();
  auto scheduler = Scheduler::Create(engine, StressConfig(), {});
  ASSERT_TRUE(scheduler.ok()) << scheduler.status();
  std::atomic<int> done_calls{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        SegmentTask task;
        task.voice_id = "alice";
        task.first_of_request = false;
        bool live = i % 3 == 0;
        task.text = live ? "live" : "dead";
        if (i % 3 == 1) {
          auto token = std::make_shared<core::CancellationToken>();
          token->Cancel();
          task.cancellation = token;
        } else if (i % 3 == 2) {
          task.deadline = core::Clock::now();
        }
        task.done = [&, live](absl::StatusOr<audio::PcmAudio> audio, const SegmentTiming&) {
          if (live) {
            // Unavailable when Shutdown finds it still queued.
            EXPECT_TRUE(audio.ok() || absl::IsUnavailable(audio.status())) << audio.status();
          } else {
            // Unavailable when Shutdown finds it still queued; never a result.
            EXPECT_TRUE(absl::IsCancelled(audio.status()) ||
                        absl::IsDeadlineExceeded(audio.status()) ||
                        absl::IsUnavailable(audio.status()))
                << audio.status();
          }
          done_calls.fetch_add(1);
        };
        ASSERT_TRUE((*scheduler)->Submit(std::move(task)).ok());
        if (t == 0 && i % 16 == 0) (*scheduler)->SweepDeadSegments();
      }
    });
  }
  for (std::thread& submitter : submitters) submitter.join();
  (*scheduler)->Shutdown();

  EXPECT_EQ(done_calls.load(), kThreads * kPerThread);
  for (const std::string& text : engine->texts()) ASSERT_EQ(text, "live");
}

}  // namespace
}  // namespace voxserve::scheduler
