// One configured model at run time: its engine, its scheduler and where it is in its life.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "engine/engine.h"
#include "scheduler/scheduler.h"
#include "service/service_config.h"

namespace voxserve::service {

enum class ModelState { kLoading, kWarmingUp, kReady, kFailed };
std::string_view ModelStateName(ModelState state);

// Owned by TtsService. Load() runs once on the startup thread; the accessors are safe cross
// thread once state() is kReady (engine and scheduler never change after that).
class ModelHost {
 public:
  ModelHost(ModelConfig config, scheduler::ModelSchedulerMetrics metrics,
            engine::EngineFactory factory);
  ~ModelHost();

  // Creates the engine, starts the scheduler, runs the warm-up texts. Sets kReady or kFailed.
  absl::Status Load();

  // Stops the scheduler and joins its workers; queued segments end with Unavailable.
  void Shutdown();

  const std::string& id() const { return config_.engine.model_id; }
  ModelState state() const { return state_.load(std::memory_order_acquire); }
  std::string error() const;  // why it failed; empty otherwise. Only valid once kFailed.
  engine::Engine& engine() const { return *engine_; }
  scheduler::Scheduler& scheduler() const { return *scheduler_; }
  const ModelConfig& config() const { return config_; }

 private:
  const ModelConfig config_;
  scheduler::ModelSchedulerMetrics metrics_;
  engine::EngineFactory factory_;
  std::atomic<ModelState> state_{ModelState::kLoading};
  std::string error_;  // written before state_ becomes kFailed (release), read after (acquire)
  std::shared_ptr<engine::Engine> engine_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
};

}  // namespace voxserve::service
