#include "scheduler/worker_launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/spawn_self.h"
#include "nlohmann/json.hpp"
#include "scheduler/worker_protocol.h"
#include "spdlog/spdlog.h"

extern char** environ;

namespace voxserve::scheduler {
namespace {

// A worker asked to exit (socket closed) normally goes within milliseconds; this bounds a
// drain's last step when one does not.
constexpr int kExitGraceMs = 2000;

absl::Status Errno(const std::string& what) {
  return absl::InternalError(what + ": " + std::strerror(errno));
}

// Waits up to `timeout_ms` for `pid` to exit, without reaping it (pidfd: no polling loop).
bool WaitExit(pid_t pid, int timeout_ms) {
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;
  pollfd exited{pidfd, POLLIN, 0};
  int ready = 0;
  do {
    ready = ::poll(&exited, 1, timeout_ms);
  } while (ready < 0 && errno == EINTR);
  ::close(pidfd);
  return ready > 0;
}

}  // namespace

std::string EncodeWorkerSpec(const WorkerSpec& spec) {
  nlohmann::json json = {{"model_id", spec.engine.model_id},
                         {"engine", spec.engine.engine},
                         {"default_voice", spec.engine.default_voice},
                         {"options", spec.engine.options},
                         {"warmup", spec.warmup},
                         {"cpus", spec.cpus},
                         {"test_faults", spec.test_faults},
                         {"log_level", spec.log.level},
                         {"log_format", spec.log.format}};
  return json.dump();
}

absl::StatusOr<WorkerSpec> DecodeWorkerSpec(const std::string& text) {
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return core::InvalidArgument("--worker-spec is not a JSON object");
  WorkerSpec spec;
  try {
    spec.engine.model_id = json.at("model_id").get<std::string>();
    spec.engine.engine = json.at("engine").get<std::string>();
    spec.engine.default_voice = json.at("default_voice").get<std::string>();
    spec.engine.options = json.at("options").get<std::map<std::string, std::string>>();
    spec.warmup = json.at("warmup").get<std::vector<std::string>>();
    spec.cpus = json.at("cpus").get<std::string>();
    spec.test_faults = json.at("test_faults").get<bool>();
    spec.log.level = json.at("log_level").get<std::string>();
    spec.log.format = json.at("log_format").get<std::string>();
  } catch (const nlohmann::json::exception& error) {
    return core::InvalidArgument(std::string("--worker-spec: ") + error.what());
  }
  return spec;
}

absl::StatusOr<std::vector<int>> ParseCpuList(const std::string& list) {
  std::vector<int> cpus;
  auto bad = [&](const std::string& why) {
    return core::InvalidArgument("cpu list \"" + list + "\": " + why +
                                 " (expected e.g. \"0-3\" or \"0,2,4-5\")");
  };
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int low = 0, high = 0;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%d-%d%c", &low, &high, &tail) == 2) {
    } else if (std::sscanf(item.c_str(), "%d%c", &low, &tail) == 1) {
      high = low;
    } else {
      return bad("\"" + item + "\" is not a CPU or a range");
    }
    if (low < 0 || high < low || high >= CPU_SETSIZE) return bad("bad range \"" + item + "\"");
    for (int cpu = low; cpu <= high; ++cpu) cpus.push_back(cpu);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return cpus;
}

ProcessLauncher::ProcessLauncher(WorkerSpec spec, const SchedulerConfig& config, int workers)
    : spec_(std::move(spec)), config_(config), workers_(std::max(1, workers)) {}

WorkerSpec ProcessLauncher::SpecFor(int index) const {
  WorkerSpec spec = spec_;
  spec.log = core::CurrentLogging();
  if (!config_.cpus.empty()) spec.cpus = config_.cpus[index % config_.cpus.size()];
  // Only engines with ONNX sessions take a CUDA device and intra-op threads; the others refuse
  // those options (a worker given them would fail to load).
  const bool onnx = engine::RunsOnnxSessions(spec.engine.engine);
  if (onnx && !config_.devices.empty()) spec.engine.options["cuda_device_id"] = "0";
  if (onnx && !spec.engine.options.contains("intra_op_threads")) {
    // Workers × threads <= cores, so workers do not fight over cores.
    int cores = UsableCpus();
    if (!spec.cpus.empty()) {
      if (auto listed = ParseCpuList(spec.cpus); listed.ok()) {
        cores = static_cast<int>(listed->size());
      }
    }
    // The workers that share this worker's cpus entry (all of them when none or one is listed).
    const int entries = config_.cpus.empty() ? 1 : static_cast<int>(config_.cpus.size());
    int sharing = 0;
    for (int i = index % entries; i < workers_; i += entries) ++sharing;
    spec.engine.options["intra_op_threads"] = std::to_string(std::max(1, cores / sharing));
  }
  return spec;
}

absl::StatusOr<WorkerConnection> ProcessLauncher::Launch(int index) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return Errno("socketpair");
  worker_protocol::EnlargeSendBuffer(pair[1]);  // the worker's end: it sends the PCM
  // The child's end must not already be kWorkerSocketFd, where dup2 would keep FD_CLOEXEC.
  int child_end = ::fcntl(pair[1], F_DUPFD_CLOEXEC, kWorkerSocketFd + 1);
  ::close(pair[1]);
  if (child_end < 0) {
    ::close(pair[0]);
    return Errno("fcntl");
  }

  // argv[0] names the real binary (ps shows voxserve, not /proc/self/exe).
  char self[4096];
  ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  std::string program = length > 0 ? std::string(self, static_cast<size_t>(length)) : "voxserve";
  std::vector<std::string> args = {program,           "--worker",
                                   "--worker-fd",     std::to_string(kWorkerSocketFd),
                                   "--worker-parent", std::to_string(::getpid()),
                                   "--worker-spec",   EncodeWorkerSpec(SpecFor(index))};
  std::vector<std::string> env;
  for (char** entry = environ; *entry; ++entry) {
    if (!config_.devices.empty() && std::strncmp(*entry, "CUDA_VISIBLE_DEVICES=", 21) == 0) {
      continue;
    }
    env.emplace_back(*entry);
  }
  if (!config_.devices.empty()) {
    env.push_back("CUDA_VISIBLE_DEVICES=" + config_.devices[index % config_.devices.size()]);
  }
  pid_t pid = 0;
  const int spawned =
      core::SpawnSelf(std::move(args), std::move(env), child_end, kWorkerSocketFd, &pid);
  ::close(child_end);
  if (spawned != 0) {
    ::close(pair[0]);
    errno = spawned;
    return Errno("posix_spawn of a worker");
  }
  return WorkerConnection{pair[0], pid};
}

std::function<std::unique_ptr<EngineInstance>(int index)> WorkerProcessInstances(
    WorkerSpec spec, const SchedulerConfig& config) {
  std::string model_id = spec.engine.model_id;
  auto launcher =
      std::make_shared<ProcessLauncher>(std::move(spec), config, config.ResolvedInstances());
  WorkerTimeouts timeouts{std::chrono::milliseconds(config.startup_timeout_ms),
                          std::chrono::milliseconds(config.batch_timeout_ms),
                          std::chrono::milliseconds(config.heartbeat_ms),
                          std::chrono::milliseconds(config.heartbeat_ms)};
  return [launcher, timeouts, model_id](int index) -> std::unique_ptr<EngineInstance> {
    return std::make_unique<WorkerInstance>(index, launcher, timeouts, model_id);
  };
}

void ProcessLauncher::End(const WorkerConnection& worker, bool kill) {
  if (worker.pid <= 0) return;
  if (kill || !WaitExit(worker.pid, kExitGraceMs)) ::kill(worker.pid, SIGKILL);
  int status = 0;
  while (::waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
    spdlog::warn("model {} worker (pid {}) died of signal {}", spec_.engine.model_id, worker.pid,
                 WTERMSIG(status));
  }
}

}  // namespace voxserve::scheduler
