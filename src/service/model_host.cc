#include "service/model_host.h"

#include "scheduler/worker_launcher.h"
#include "spdlog/spdlog.h"

namespace voxserve::service {

std::string_view ModelStateName(ModelState state) {
  switch (state) {
    case ModelState::kLoading:
      return "loading";
    case ModelState::kWarmingUp:
      return "warming_up";
    case ModelState::kReady:
      return "ready";
    case ModelState::kFailed:
      return "failed";
  }
  return "unknown";
}

ModelHost::ModelHost(ModelConfig config, scheduler::ModelSchedulerMetrics metrics,
                     engine::EngineFactory factory)
    : config_(std::move(config)), metrics_(metrics), factory_(std::move(factory)) {}

ModelHost::~ModelHost() {
  scheduler_.reset();  // joins the workers before the engine they drive goes away
}

void ModelHost::Shutdown() {
  if (scheduler_) scheduler_->Shutdown();
}

std::string ModelHost::error() const {
  return state() == ModelState::kFailed ? error_ : std::string();
}

absl::Status ModelHost::Load() {
  auto fail = [&](const absl::Status& status) {
    error_ = std::string(status.message());
    state_.store(ModelState::kFailed, std::memory_order_release);
    spdlog::error("model {}: {}", id(), error_);
    return status;
  };
  auto created = factory_(config_.engine);
  if (!created.ok()) return fail(created.status());
  engine_ = std::move(*created);

  state_.store(ModelState::kWarmingUp, std::memory_order_release);
  auto started = std::chrono::steady_clock::now();
  scheduler::SchedulerConfig scheduling = config_.scheduling;
  // Worker processes load and warm up engines of their own and speak every request; this copy
  // then only clones voices, so it warms up only that (and not a second time on the same GPU).
  const bool in_workers = scheduling.isolation == scheduler::Isolation::kProcess;
  absl::Status warm = absl::OkStatus();
  if (!in_workers) {
    warm = engine_->Warmup(config_.warmup);
  } else if (engine_->voice_cloner() != nullptr && !config_.warmup.empty()) {
    warm = engine_->voice_cloner()->WarmupCloning();
  }
  if (!warm.ok()) return fail(warm);
  scheduler::InstanceFactory instances;  // empty: threads over engine_
  if (scheduling.isolation == scheduler::Isolation::kThread &&
      scheduling.instances == scheduler::kInstancesAuto && engine_->info().parallel_calls) {
    scheduling.instances = scheduler::UsableCpus();  // a call per core at once (espeak-ng)
  }
  if (scheduling.isolation == scheduler::Isolation::kProcess) {
    if (engine_->AsStreaming() != nullptr && scheduling.instances == scheduler::kInstancesAuto &&
        scheduling.devices.empty()) {
      // One worker per core suits engines that use a core each (espeak-ng). A streaming engine
      // (CosyVoice: a 0.5 B LLM, ~3 GB per copy) holds the whole model in every worker and
      // spreads each run over every core, so `auto` is one worker, or one per listed device.
      scheduling.instances = 1;
    }
    instances = scheduler::WorkerProcessInstances(
        {config_.engine, config_.warmup, "", scheduling.worker_test_faults}, scheduling);
  }
  auto scheduler =
      scheduler::Scheduler::Create(engine_, scheduling, metrics_, std::move(instances));
  if (!scheduler.ok()) return fail(scheduler.status());
  scheduler_ = std::move(*scheduler);

  double warmup_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  spdlog::info(
      "model {} ready: engine {}, {} voices, {} instance(s) ({}, {} live), max batch {}, warm-up "
      "{:.1f} ms",
      id(), engine_->info().engine, engine_->info().voices.size(), scheduler_->Instances(),
      scheduler::IsolationName(config_.scheduling.isolation), scheduler_->LiveInstances(),
      engine_->info().max_batch_size, warmup_ms);
  state_.store(ModelState::kReady, std::memory_order_release);
  return absl::OkStatus();
}

}  // namespace voxserve::service
