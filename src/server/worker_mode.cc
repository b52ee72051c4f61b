#include "server/worker_mode.h"

#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/logging.h"
#include "engine/engine_factory.h"
#include "engine/streaming_engine.h"
#include "scheduler/worker_launcher.h"
#include "scheduler/worker_protocol.h"
#include "spdlog/spdlog.h"

namespace voxserve::server {
namespace {

namespace wire = scheduler::worker_protocol;

// Exit codes the server's log shows for a worker that gave up.
constexpr int kExitUsage = 2;
constexpr int kExitProtocol = 3;
constexpr int kExitOrphan = 4;
constexpr int kExitTestCrash = 70;

constexpr std::string_view kHangText = "VOXSERVE_TEST_HANG";
constexpr std::string_view kCrashText = "VOXSERVE_TEST_CRASH";

struct WorkerArgs {
  int fd = -1;
  pid_t parent = 0;
  std::string spec;
};

bool ParseArgs(int argc, const char* const* argv, WorkerArgs* out) {
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--worker-fd") {
      out->fd = std::atoi(value);
    } else if (flag == "--worker-parent") {
      out->parent = static_cast<pid_t>(std::atol(value));
    } else if (flag == "--worker-spec") {
      out->spec = value;
    } else {
      return false;
    }
  }
  return out->fd >= 0 && out->parent > 0 && !out->spec.empty();
}

absl::Status Pin(const std::string& cpus) {
  auto listed = scheduler::ParseCpuList(cpus);
  if (!listed.ok()) return listed.status();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : *listed) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    return absl::InvalidArgumentError("cannot pin to cpus " + cpus + ": " + std::strerror(errno));
  }
  return absl::OkStatus();
}

void ObeyTestFaults(const std::vector<wire::WireSegment>& segments) {
  for (const wire::WireSegment& segment : segments) {
    if (segment.text.find(kCrashText) != std::string::npos) std::_Exit(kExitTestCrash);
    if (segment.text.find(kHangText) != std::string::npos) {
      spdlog::warn("test fault: hanging");
      while (true) ::pause();  // until the watchdog's SIGKILL
    }
  }
}

// A streaming engine's runner in this worker (the step loop's calls, from the parent's frames).
// Faults (test only): a segment with the crash or hang text is obeyed on the step after its
// first chunk, so the parent sees a worker lost mid-segment, after audio went out.
struct StreamState {
  std::unique_ptr<engine::StreamRunner> runner;
  std::vector<engine::SequenceStep> refused;  // Begins the runner refused: ended at the next step
  std::map<uint64_t, std::string> faulty;     // sequence -> fault text, armed after one step
  std::map<uint64_t, int> faulty_steps;
};

absl::Status ServeStreamFrame(int fd, const wire::Frame& frame, StreamState& stream,
                              bool test_faults) {
  if (frame.type == wire::FrameType::kBegin) {
    auto begin = wire::DecodeBegin(frame.payload);
    if (!begin.ok()) return begin.status();
    const wire::WireSegment& segment = begin->second;
    absl::Status begun = stream.runner->Begin(begin->first, segment.Input());
    if (!begun.ok()) {
      engine::SequenceStep end;
      end.id = begin->first;
      end.end = begun;
      stream.refused.push_back(std::move(end));
    } else if (test_faults) {
      for (std::string_view text : {kCrashText, kHangText}) {
        if (segment.text.find(text) != std::string::npos) stream.faulty[begin->first] = text;
      }
    }
    return absl::OkStatus();
  }
  if (frame.type == wire::FrameType::kRelease) {
    auto id = wire::DecodeSequenceId(frame.payload);
    if (!id.ok()) return id.status();
    stream.runner->Release(*id);
    stream.faulty.erase(*id);
    return absl::OkStatus();
  }
  // kStep
  for (const auto& [id, text] : stream.faulty) {
    if (stream.faulty_steps[id]++ == 0) continue;
    wire::WireSegment fault;
    fault.text = text;
    ObeyTestFaults({fault});
  }
  std::vector<engine::SequenceStep> steps = std::move(stream.refused);
  stream.refused.clear();
  try {
    for (engine::SequenceStep& step : stream.runner->Step()) {
      if (step.end) stream.faulty.erase(step.id);
      steps.push_back(std::move(step));
    }
  } catch (const std::exception& error) {
    return absl::InternalError(std::string("engine failed: ") + error.what());
  }
  return wire::WriteFramePieces(fd, wire::FrameType::kStepped,
                                wire::StepsPayload(steps, stream.runner->Stats()));
}

int Serve(int fd, engine::Engine& engine, bool test_faults) {
  StreamState stream;
  if (engine::StreamingEngine* streaming = engine.AsStreaming()) {
    auto runner = streaming->CreateRunner();
    if (!runner.ok()) {
      spdlog::error("{}", std::string(runner.status().message()));
      return kExitProtocol;
    }
    stream.runner = std::move(*runner);
  }
  while (true) {
    auto frame = wire::ReadFrame(fd);
    if (!frame.ok()) {
      if (frame.status().code() == absl::StatusCode::kUnavailable) return 0;  // server closed it
      spdlog::error("{}", std::string(frame.status().message()));
      return kExitProtocol;
    }
    absl::Status sent;
    if (frame->type == wire::FrameType::kPing) {
      sent = wire::WriteFrame(fd, wire::FrameType::kPong, {});
    } else if (frame->type == wire::FrameType::kSynthesize) {
      auto segments = wire::DecodeSegments(frame->payload);
      if (!segments.ok()) {
        spdlog::error("{}", std::string(segments.status().message()));
        return kExitProtocol;
      }
      if (test_faults) ObeyTestFaults(*segments);
      std::vector<engine::SegmentInput> inputs;
      inputs.reserve(segments->size());
      for (const wire::WireSegment& segment : *segments) {
        inputs.push_back(segment.Input());
      }
      std::vector<absl::StatusOr<audio::PcmAudio>> results;
      try {
        results = engine.Synthesize(inputs);
      } catch (const std::exception& error) {
        results.assign(inputs.size(),
                       absl::InternalError(std::string("engine failed: ") + error.what()));
      }
      sent = wire::WriteFramePieces(fd, wire::FrameType::kResults, wire::ResultsPayload(results));
    } else if (stream.runner &&
               (frame->type == wire::FrameType::kBegin || frame->type == wire::FrameType::kStep ||
                frame->type == wire::FrameType::kRelease)) {
      sent = ServeStreamFrame(fd, *frame, stream, test_faults);
      if (!sent.ok() && sent.code() != absl::StatusCode::kUnavailable) {
        spdlog::error("{}", std::string(sent.message()));
        return kExitProtocol;  // the parent sees the loss and ends the active segments
      }
    } else {
      spdlog::error("unexpected frame type {} from the server", static_cast<int>(frame->type));
      return kExitProtocol;
    }
    if (!sent.ok()) return 0;  // the server is gone
  }
}

// A worker allocates and frees the same few large buffers for every batch (an engine's samples,
// grown as it synthesizes: ~1 MB for a sentence). With glibc's defaults those above its mmap
// threshold, and the top of the heap once more than the trim threshold is free, go back to the
// kernel after each batch and come back as fresh zeroed pages: ~100-160 page faults per
// sentence, measured with /proc/<pid>/stat during the issue 11 profile. Keeping them in the heap
// bounds the worker's memory by its largest batch, which it needs again anyway.
void KeepLargeBuffersInTheHeap() {
  constexpr int kMmapThresholdBytes = 32 << 20;  // glibc's own ceiling for its dynamic threshold
  constexpr int kTrimThresholdBytes = 64 << 20;
  (void)::mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
  (void)::mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
}

}  // namespace

bool IsWorkerCommandLine(int argc, const char* const* argv) {
  return argc > 1 && std::string_view(argv[1]) == "--worker";
}

int RunWorker(int argc, const char* const* argv) {
  // First: never outlive the server, even if it died before this line (then getppid differs).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  WorkerArgs args;
  if (!ParseArgs(argc, argv, &args)) {
    std::fputs("voxserve --worker is started by voxserve itself, not by hand\n", stderr);
    return kExitUsage;
  }
  if (::getppid() != args.parent) return kExitOrphan;
  KeepLargeBuffersInTheHeap();
  auto spec = scheduler::DecodeWorkerSpec(args.spec);
  if (!spec.ok()) {
    std::fprintf(stderr, "voxserve worker: %s\n", std::string(spec.status().message()).c_str());
    return kExitUsage;
  }
  if (absl::Status logging = core::ConfigureLogging(
          spec->log.level, spec->log.format,
          "worker " + spec->engine.model_id + " " + std::to_string(::getpid()));
      !logging.ok()) {
    std::fprintf(stderr, "voxserve worker: %s\n", std::string(logging.message()).c_str());
    return kExitUsage;
  }
  auto fail = [&](const absl::Status& status) {
    spdlog::error("{}", std::string(status.message()));
    (void)wire::WriteFrame(args.fd, wire::FrameType::kFailed, std::string(status.message()));
    return 1;
  };
  if (!spec->cpus.empty()) {
    if (absl::Status pinned = Pin(spec->cpus); !pinned.ok()) return fail(pinned);
  }
  auto engine = engine::CreateEngine(spec->engine);
  if (!engine.ok()) return fail(engine.status());
  if (absl::Status warm = (*engine)->Warmup(spec->warmup); !warm.ok()) return fail(warm);
  if (spec->test_faults) spdlog::warn("TEST ONLY fault texts are obeyed");
  if (absl::Status sent = wire::WriteFrame(args.fd, wire::FrameType::kReady,
                                           wire::EncodeU32(static_cast<uint32_t>(::getpid())));
      !sent.ok()) {
    return 0;
  }
  return Serve(args.fd, **engine, spec->test_faults);
}

}  // namespace voxserve::server
