// WorkerInstance against a fake worker: a thread speaking the worker protocol on a socketpair,
// scripted per test. The watchdog, the heartbeat and every way a worker can go wrong end in a
// clear status and a worker that is ended (killed and reaped), never in a hang.
#include "scheduler/worker_instance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "core/error.h"
#include "scheduler/worker_protocol.h"
#include "support/fake_streaming_engine.h"

namespace voxserve::scheduler {
namespace {

namespace wire = worker_protocol;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

using Behaviour = std::function<void(int fd)>;

// Launches `behaviour` on a thread with the worker's end of a socketpair.
class FakeLauncher : public WorkerLauncher {
 public:
  explicit FakeLauncher(Behaviour behaviour) : behaviour_(std::move(behaviour)) {}
  ~FakeLauncher() override {
    if (thread_.joinable()) thread_.join();
  }

  absl::StatusOr<WorkerConnection> Launch(int) override {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      return absl::InternalError("socketpair");
    }
    ++launches;
    thread_ = std::thread([this, fd = fds[1]] {
      behaviour_(fd);
      ::close(fd);
    });
    return WorkerConnection{fds[0], 0};
  }
  // The fake exits once the parent's end is closed (its next read sees end-of-stream).
  void End(const WorkerConnection&, bool kill) override {
    ends.push_back(kill);
    if (thread_.joinable()) thread_.join();
  }
  // Waits until the fake worker's thread has returned (it closed its end).
  void WaitWorkerGone() {
    if (thread_.joinable()) thread_.join();
  }

  int launches = 0;
  std::vector<bool> ends;  // kill flag of each End

 private:
  Behaviour behaviour_;
  std::thread thread_;
};

void SendReady(int fd) {
  ASSERT_TRUE(wire::WriteFrame(fd, wire::FrameType::kReady, wire::EncodeU32(1)).ok());
}

// Reads until the parent closes the socket.
void WaitForClose(int fd) {
  while (wire::ReadFrame(fd).ok()) {
  }
}

// A healthy worker: PCM of one sample per text byte; answers pings.
void Healthy(int fd) {
  SendReady(fd);
  while (true) {
    auto frame = wire::ReadFrame(fd);
    if (!frame.ok()) return;
    if (frame->type == wire::FrameType::kPing) {
      (void)wire::WriteFrame(fd, wire::FrameType::kPong, {});
      continue;
    }
    auto segments = wire::DecodeSegments(frame->payload);
    std::vector<absl::StatusOr<audio::PcmAudio>> results;
    for (const wire::WireSegment& segment : *segments) {
      audio::PcmAudio pcm;
      pcm.sample_rate = 16000;
      pcm.samples.assign(segment.text.size(), 0.5f);
      results.push_back(std::move(pcm));
    }
    (void)wire::WriteFrame(fd, wire::FrameType::kResults, wire::EncodeResults(results));
  }
}

WorkerTimeouts Fast() {
  WorkerTimeouts timeouts;
  timeouts.startup = milliseconds(5000);
  timeouts.batch = milliseconds(5000);
  timeouts.heartbeat = milliseconds(0);  // every Heartbeat() call pings
  timeouts.heartbeat_answer = milliseconds(5000);
  return timeouts;
}

std::vector<engine::SegmentInput> OneSegment() { return {{"Hello.", "en-us", 1.0}}; }

TEST(WorkerInstanceTest, HealthyWorkerServesBatchesAndAnswersPings) {
  auto launcher = std::make_shared<FakeLauncher>(Healthy);
  WorkerInstance instance(0, launcher, Fast(), "m");
  EXPECT_FALSE(instance.Live());
  ASSERT_TRUE(instance.Start().ok());
  EXPECT_TRUE(instance.Live());

  auto inputs = OneSegment();
  BatchOutcome outcome = instance.Run(inputs);
  EXPECT_FALSE(outcome.not_started);
  ASSERT_EQ(outcome.results.size(), 1u);
  ASSERT_TRUE(outcome.results[0].ok()) << outcome.results[0].status();
  EXPECT_EQ(outcome.results[0]->samples.size(), 6u);
  EXPECT_EQ(outcome.results[0]->sample_rate, 16000);

  instance.Heartbeat();
  EXPECT_TRUE(instance.Live());
  instance.Stop();
  EXPECT_FALSE(instance.Live());
  EXPECT_EQ(launcher->ends, std::vector<bool>{false});  // asked to exit, not killed
}

TEST(WorkerInstanceTest, HungBatchIsEndedByTheWatchdogWithARetriableError) {
  auto launcher = std::make_shared<FakeLauncher>([](int fd) {
    SendReady(fd);
    ASSERT_TRUE(wire::ReadFrame(fd).ok());  // takes the batch, never answers
    WaitForClose(fd);
  });
  WorkerTimeouts timeouts = Fast();
  timeouts.batch = milliseconds(50);
  WorkerInstance instance(0, launcher, timeouts, "m");
  ASSERT_TRUE(instance.Start().ok());

  auto inputs = OneSegment();
  BatchOutcome outcome = instance.Run(inputs);
  EXPECT_FALSE(outcome.not_started);
  ASSERT_EQ(outcome.results.size(), 1u);
  const absl::Status& status = outcome.results[0].status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("batch_timeout_ms"));
  EXPECT_EQ(core::DetailOf(status).code, "engine_instance_lost");
  EXPECT_EQ(core::DetailOf(status).retry_after_seconds, 1);
  EXPECT_FALSE(instance.Live());
  EXPECT_EQ(launcher->ends, std::vector<bool>{true});  // killed
}

TEST(WorkerInstanceTest, WorkerGoneBeforeTheBatchLeavesItNotStarted) {
  auto launcher = std::make_shared<FakeLauncher>([](int fd) { SendReady(fd); });
  WorkerInstance instance(0, launcher, Fast(), "m");
  ASSERT_TRUE(instance.Start().ok());
  launcher->WaitWorkerGone();

  auto inputs = OneSegment();
  BatchOutcome outcome = instance.Run(inputs);
  EXPECT_TRUE(outcome.not_started);
  EXPECT_TRUE(outcome.results.empty());
  EXPECT_FALSE(instance.Live());
}

TEST(WorkerInstanceTest, GarbageAnswerLosesTheWorker) {
  auto launcher = std::make_shared<FakeLauncher>([](int fd) {
    SendReady(fd);
    ASSERT_TRUE(wire::ReadFrame(fd).ok());
    std::string garbage(wire::kHeaderBytes, '\x7f');
    ASSERT_EQ(::write(fd, garbage.data(), garbage.size()), static_cast<ssize_t>(garbage.size()));
    WaitForClose(fd);
  });
  WorkerInstance instance(0, launcher, Fast(), "m");
  ASSERT_TRUE(instance.Start().ok());
  auto inputs = OneSegment();
  BatchOutcome outcome = instance.Run(inputs);
  ASSERT_EQ(outcome.results.size(), 1u);
  EXPECT_EQ(outcome.results[0].status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(outcome.results[0].status().message(), HasSubstr("malformed worker frame"));
  EXPECT_FALSE(instance.Live());
}

TEST(WorkerInstanceTest, WrongNumberOfResultsLosesTheWorker) {
  auto launcher = std::make_shared<FakeLauncher>([](int fd) {
    SendReady(fd);
    ASSERT_TRUE(wire::ReadFrame(fd).ok());
    std::vector<absl::StatusOr<audio::PcmAudio>> two = {absl::InternalError("a"),
                                                        absl::InternalError("b")};
    ASSERT_TRUE(wire::WriteFrame(fd, wire::FrameType::kResults, wire::EncodeResults(two)).ok());
    WaitForClose(fd);
  });
  WorkerInstance instance(0, launcher, Fast(), "m");
  ASSERT_TRUE(instance.Start().ok());
  auto inputs = OneSegment();
  BatchOutcome outcome = instance.Run(inputs);
  ASSERT_EQ(outcome.results.size(), 1u);
  EXPECT_THAT(outcome.results[0].status().message(), HasSubstr("wrong number of results"));
  EXPECT_FALSE(instance.Live());
}

TEST(WorkerInstanceTest, WorkerThatFailsToLoadFailsStartWithItsReason) {
  auto launcher = std::make_shared<FakeLauncher>([](int fd) {
    ASSERT_TRUE(wire::WriteFrame(fd, wire::FrameType::kFailed, "no such model file").ok());
  });
  WorkerInstance instance(0, launcher, Fast(), "m");
  absl::Status started = instance.Start();
  EXPECT_EQ(started.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(started.message(), HasSubstr("no such model file"));
  EXPECT_FALSE(instance.Live());
  EXPECT_EQ(launcher->ends, std::vector<bool>{true});
}

TEST(WorkerInstanceTest, WorkerSilentAtStartupFailsStartAfterTheStartupTimeout) {
  auto launcher = std::make_shared<FakeLauncher>(WaitForClose);
  WorkerTimeouts timeouts = Fast();
  timeouts.startup = milliseconds(30);
  WorkerInstance instance(0, launcher, timeouts, "m");
  EXPECT_EQ(instance.Start().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_FALSE(instance.Live());
}

TEST(WorkerInstanceTest, SilentHeartbeatLosesTheWorker) {
  auto launcher = std::make_shared<FakeLauncher>([](int fd) {
    SendReady(fd);
    WaitForClose(fd);  // reads the ping, never answers
  });
  WorkerTimeouts timeouts = Fast();
  timeouts.heartbeat_answer = milliseconds(30);
  WorkerInstance instance(0, launcher, timeouts, "m");
  ASSERT_TRUE(instance.Start().ok());
  instance.Heartbeat();
  EXPECT_FALSE(instance.Live());
  EXPECT_EQ(launcher->ends, std::vector<bool>{true});
}

TEST(WorkerInstanceTest, StartAgainAfterALossLaunchesANewWorker) {
  auto launcher = std::make_shared<FakeLauncher>(Healthy);
  WorkerInstance instance(0, launcher, Fast(), "m");
  ASSERT_TRUE(instance.Start().ok());
  instance.Stop();
  ASSERT_TRUE(instance.Start().ok());
  EXPECT_EQ(launcher->launches, 2);
  auto inputs = OneSegment();
  EXPECT_TRUE(instance.Run(inputs).results[0].ok());
}

// A streaming worker: its runner (the fake streaming engine's, ungated) serves kBegin, kStep and
// kRelease as worker_mode.cc does. `die_at_step`: closes the socket instead of answering that
// step (1-based), as a crashed worker would.
Behaviour StreamingWorker(int die_at_step = 0) {
  return [die_at_step](int fd) {
    test_support::FakeStreamingEngine engine({.gated = false});
    auto runner = engine.CreateRunner();
    SendReady(fd);
    int steps = 0;
    while (true) {
      auto frame = wire::ReadFrame(fd);
      if (!frame.ok()) return;
      if (frame->type == wire::FrameType::kBegin) {
        auto begin = wire::DecodeBegin(frame->payload);
        ASSERT_TRUE(begin.ok());
        ASSERT_TRUE((*runner)
                        ->Begin(begin->first,
                                {begin->second.text, begin->second.voice_id, begin->second.speed})
                        .ok());
      } else if (frame->type == wire::FrameType::kRelease) {
        (*runner)->Release(*wire::DecodeSequenceId(frame->payload));
      } else if (frame->type == wire::FrameType::kStep) {
        if (++steps == die_at_step) return;
        std::vector<engine::SequenceStep> stepped = (*runner)->Step();
        (void)wire::WriteFrame(fd, wire::FrameType::kStepped,
                               wire::EncodeSteps(stepped, (*runner)->Stats()));
      }
    }
  };
}

TEST(WorkerInstanceTest, StreamingWorkerStepsItsSequencesAndSendsTheirChunks) {
  auto launcher = std::make_shared<FakeLauncher>(StreamingWorker());
  WorkerInstance instance(0, launcher, Fast(), "m");
  ASSERT_TRUE(instance.Start().ok());
  ASSERT_TRUE(instance.Begin(7, {"a b", "alice", 1.0}).ok());
  ASSERT_TRUE(instance.Begin(9, {"c d e", "alice", 1.0}).ok());
  instance.Release(9);

  StepOutcome first = instance.Step();
  ASSERT_TRUE(first.lost.ok()) << first.lost;
  ASSERT_EQ(first.steps.size(), 1u);  // 9 was released before the step
  EXPECT_EQ(first.steps[0].id, 7u);
  EXPECT_EQ(first.steps[0].chunk.samples.size(), 10u);
  EXPECT_FALSE(first.steps[0].end.has_value());
  StepOutcome second = instance.Step();
  ASSERT_EQ(second.steps.size(), 1u);
  EXPECT_EQ(second.steps[0].chunk.samples.front(), 1.0f);  // chunk 1 of 7
  ASSERT_TRUE(second.steps[0].end.has_value());
  EXPECT_TRUE(second.steps[0].end->ok());
  EXPECT_TRUE(instance.Live());
}

TEST(WorkerInstanceTest, StreamingWorkerLostMidStepEndsItsSequencesWithARetriableError) {
  auto launcher = std::make_shared<FakeLauncher>(StreamingWorker(/*die_at_step=*/2));
  WorkerInstance instance(0, launcher, Fast(), "m");
  ASSERT_TRUE(instance.Start().ok());
  ASSERT_TRUE(instance.Begin(1, {"a b c", "alice", 1.0}).ok());
  ASSERT_TRUE(instance.Step().lost.ok());

  StepOutcome lost = instance.Step();
  EXPECT_EQ(lost.lost.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(lost.lost.message()), HasSubstr("lost during synthesis"));
  EXPECT_EQ(core::DetailOf(lost.lost).code, "engine_instance_lost");
  EXPECT_FALSE(instance.Live());
  EXPECT_EQ(launcher->ends, std::vector<bool>{true});
}

}  // namespace
}  // namespace voxserve::scheduler
