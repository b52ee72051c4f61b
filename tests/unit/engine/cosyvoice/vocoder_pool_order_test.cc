// Who goes first on CosyVoice's vocoder pool (JobPriority, issue 44): a stream's first chunk
// before any stream's later chunks, later chunks by when their listener runs out of audio, ties
// in posting order. One thread, held by a first job while the others are posted, so the order
// they then run in is the pool's choice alone.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "engine/cosyvoice/vocoder_pool.h"

namespace voxserve::engine::cosyvoice {
namespace {

using Clock = std::chrono::steady_clock;

class Recorder {
 public:
  std::function<void()> Job(std::string name) {
    return [this, name = std::move(name)] {
      std::lock_guard lock(mutex_);
      ran_.push_back(name);
      changed_.notify_all();
    };
  }
  // A job that holds the pool's thread until Release.
  std::function<void()> Holder() {
    return [this] {
      std::unique_lock lock(mutex_);
      holding_ = true;
      changed_.notify_all();
      changed_.wait_for(lock, std::chrono::seconds(30), [this] { return released_; });
    };
  }
  void WaitHolding() {
    std::unique_lock lock(mutex_);
    ASSERT_TRUE(changed_.wait_for(lock, std::chrono::seconds(30), [this] { return holding_; }));
  }
  void Release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }
  std::vector<std::string> WaitFor(size_t count) {
    std::unique_lock lock(mutex_);
    EXPECT_TRUE(
        changed_.wait_for(lock, std::chrono::seconds(30), [&] { return ran_.size() >= count; }));
    return ran_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> ran_;
  bool holding_ = false;
  bool released_ = false;
};

JobPriority Later(Clock::time_point runs_dry) { return {false, runs_dry}; }

TEST(VocoderPoolOrder, FirstChunksGoFirstThenWhoeverRunsDrySoonest) {
  auto pool = VocoderPool::Create(1);
  ASSERT_TRUE(pool.ok()) << pool.status();
  Recorder recorder;
  (*pool)->Post(recorder.Holder());
  recorder.WaitHolding();
  const Clock::time_point now = Clock::now();
  (*pool)->Post(recorder.Job("A later, dry in 5 s"), Later(now + std::chrono::seconds(5)));
  (*pool)->Post(recorder.Job("B first"), {});
  (*pool)->Post(recorder.Job("C later, dry in 1 s"), Later(now + std::chrono::seconds(1)));
  (*pool)->Post(recorder.Job("D first"), {});
  (*pool)->Post(recorder.Job("E later, dry in 1 s"), Later(now + std::chrono::seconds(1)));
  recorder.Release();
  EXPECT_EQ(recorder.WaitFor(5),
            (std::vector<std::string>{"B first", "D first", "C later, dry in 1 s",
                                      "E later, dry in 1 s", "A later, dry in 5 s"}));
}

TEST(VocoderPoolOrder, FlowJobsAreOrderedWithTheRest) {
  auto pool = VocoderPool::Create(1);  // no flow: a flow job finishes with an error at its turn
  ASSERT_TRUE(pool.ok()) << pool.status();
  Recorder recorder;
  (*pool)->Post(recorder.Holder());
  recorder.WaitHolding();
  (*pool)->Post(recorder.Job("later"), Later(Clock::now()));
  FlowJob flow;
  auto record = recorder.Job("first piece's flow");
  flow.finish = [record](absl::StatusOr<ProviderMel>) { record(); };
  (*pool)->PostFlow(std::move(flow));  // default priority: a first chunk
  recorder.Release();
  EXPECT_EQ(recorder.WaitFor(2), (std::vector<std::string>{"first piece's flow", "later"}));
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
