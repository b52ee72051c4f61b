#include "scheduler/worker_instance.h"

#include <unistd.h>

#include "core/error.h"
#include "scheduler/worker_protocol.h"
#include "spdlog/spdlog.h"

namespace voxserve::scheduler {
namespace {

namespace wire = worker_protocol;
using Clock = std::chrono::steady_clock;

// Retry-After for segments lost with their worker: a restart takes about a warm-up, and the
// other workers usually take the retry at once.
constexpr int kLostRetryAfterSeconds = 1;

}  // namespace

WorkerInstance::WorkerInstance(int index, std::shared_ptr<WorkerLauncher> launcher,
                               WorkerTimeouts timeouts, std::string model_id)
    : index_(index),
      launcher_(std::move(launcher)),
      timeouts_(timeouts),
      model_id_(std::move(model_id)) {}

WorkerInstance::~WorkerInstance() { Stop(); }

void WorkerInstance::Stop() {
  if (worker_.fd < 0) return;
  ::close(worker_.fd);  // the worker reads end-of-stream and exits
  launcher_->End(worker_, /*kill=*/false);
  worker_ = {};
}

void WorkerInstance::Lose(const std::string& why, bool kill) {
  spdlog::warn("model {} worker {} (pid {}) lost: {}", model_id_, index_, worker_.pid, why);
  ::close(worker_.fd);
  launcher_->End(worker_, kill);
  worker_ = {};
}

absl::Status WorkerInstance::Start() {
  if (Live()) return absl::OkStatus();
  auto launched = launcher_->Launch(index_);
  if (!launched.ok()) return launched.status();
  worker_ = *launched;
  auto frame = wire::ReadFrame(worker_.fd, Clock::now() + timeouts_.startup);
  absl::Status failure;
  if (!frame.ok()) {
    failure = frame.status();
  } else if (frame->type == wire::FrameType::kFailed) {
    failure = absl::UnavailableError("worker failed to start: " + frame->payload);
  } else if (frame->type != wire::FrameType::kReady || !wire::DecodeU32(frame->payload).ok()) {
    failure = absl::DataLossError("worker sent something other than READY");
  }
  if (!failure.ok()) {
    Lose(std::string(failure.message()), /*kill=*/true);
    return failure;
  }
  last_answer_ = Clock::now();
  spdlog::info("model {} worker {} ready (pid {})", model_id_, index_, worker_.pid);
  return absl::OkStatus();
}

BatchOutcome WorkerInstance::Run(std::span<const engine::SegmentInput> batch) {
  BatchOutcome outcome;
  if (!Live()) {
    outcome.not_started = true;
    return outcome;
  }
  std::vector<wire::WireSegment> segments;
  segments.reserve(batch.size());
  for (const engine::SegmentInput& input : batch) {
    segments.push_back(wire::WireSegment::From(input));
  }
  if (absl::Status sent = wire::WriteFrame(worker_.fd, wire::FrameType::kSynthesize,
                                           wire::EncodeSegments(segments));
      !sent.ok()) {
    // The worker was gone before it could read the batch: nothing ran, so the batch can go
    // to another worker.
    Lose(std::string(sent.message()), /*kill=*/true);
    outcome.not_started = true;
    return outcome;
  }
  auto type = wire::ReadFrameInto(worker_.fd, &answer_, Clock::now() + timeouts_.batch);
  absl::Status failure;
  if (!type.ok()) {
    failure = type.status().code() == absl::StatusCode::kDeadlineExceeded
                  ? absl::DeadlineExceededError("batch ran past batch_timeout_ms (" +
                                                std::to_string(timeouts_.batch.count()) + " ms)")
                  : type.status();
  } else if (*type != wire::FrameType::kResults) {
    failure = absl::DataLossError("worker answered a batch with frame type " +
                                  std::to_string(static_cast<int>(*type)));
  } else {
    auto results = wire::DecodeResults(answer_.view());
    if (results.ok() && results->size() == batch.size()) {
      last_answer_ = Clock::now();
      outcome.results = *std::move(results);
      return outcome;
    }
    failure = results.ok() ? absl::DataLossError("worker returned the wrong number of results")
                           : results.status();
  }
  Lose(std::string(failure.message()), /*kill=*/true);
  // The batch may have been the worker's undoing, so it is not retried here; the client may.
  absl::Status lost =
      core::InstanceLost("engine worker of model " + model_id_ + " was lost during synthesis (" +
                             std::string(failure.message()) + "); retry",
                         kLostRetryAfterSeconds);
  outcome.results.assign(batch.size(), lost);
  return outcome;
}

absl::Status WorkerInstance::Begin(engine::SequenceId id, const engine::SegmentInput& input) {
  if (!Live()) return absl::UnavailableError("worker is not running");
  absl::Status sent = wire::WriteFrame(worker_.fd, wire::FrameType::kBegin,
                                       wire::EncodeBegin(id, wire::WireSegment::From(input)));
  if (!sent.ok()) Lose(std::string(sent.message()), /*kill=*/true);  // not started: requeued
  return sent;
}

void WorkerInstance::Release(engine::SequenceId id) {
  if (!Live()) return;
  absl::Status sent =
      wire::WriteFrame(worker_.fd, wire::FrameType::kRelease, wire::EncodeSequenceId(id));
  if (!sent.ok()) Lose(std::string(sent.message()), /*kill=*/true);
}

StepOutcome WorkerInstance::Step() {
  StepOutcome outcome;
  absl::Status failure;
  if (!Live()) {
    failure = absl::UnavailableError("worker is not running");
  } else if (failure = wire::WriteFrame(worker_.fd, wire::FrameType::kStep, {}); failure.ok()) {
    auto type = wire::ReadFrameInto(worker_.fd, &answer_, Clock::now() + timeouts_.batch);
    if (!type.ok()) {
      failure = type.status().code() == absl::StatusCode::kDeadlineExceeded
                    ? absl::DeadlineExceededError("step ran past batch_timeout_ms (" +
                                                  std::to_string(timeouts_.batch.count()) + " ms)")
                    : type.status();
    } else if (*type != wire::FrameType::kStepped) {
      failure = absl::DataLossError("worker answered a step with frame type " +
                                    std::to_string(static_cast<int>(*type)));
    } else {
      auto stepped = wire::DecodeSteps(answer_.view());
      if (stepped.ok()) {
        last_answer_ = Clock::now();
        outcome.steps = std::move(stepped->steps);
        outcome.stats = stepped->stats;
        return outcome;
      }
      failure = stepped.status();
    }
  }
  if (Live()) Lose(std::string(failure.message()), /*kill=*/true);
  // As for a batch: what was active may have been the worker's undoing, so the client retries.
  outcome.lost =
      core::InstanceLost("engine worker of model " + model_id_ + " was lost during synthesis (" +
                             std::string(failure.message()) + "); retry",
                         kLostRetryAfterSeconds);
  return outcome;
}

void WorkerInstance::Heartbeat() {
  if (!Live() || Clock::now() - last_answer_ < timeouts_.heartbeat) return;
  absl::Status status = wire::WriteFrame(worker_.fd, wire::FrameType::kPing, {});
  if (status.ok()) {
    auto frame = wire::ReadFrame(worker_.fd, Clock::now() + timeouts_.heartbeat_answer);
    if (!frame.ok()) {
      status = frame.status();
    } else if (frame->type != wire::FrameType::kPong) {
      status = absl::DataLossError("worker answered a ping with something else");
    }
  }
  if (!status.ok()) {
    Lose("heartbeat: " + std::string(status.message()), /*kill=*/true);
    return;
  }
  last_answer_ = Clock::now();
}

}  // namespace voxserve::scheduler
