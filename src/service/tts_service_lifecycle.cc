// TtsService's life (service/tts_service.h): creating it and its models, loading and warming
// them up, health and readiness, the drain, and the figures /health shows. The request flow is in
// tts_service.cc.
#include <algorithm>
#include <thread>

#include "core/error.h"
#include "service/response_cache_key.h"
#include "service/tts_service.h"
#include "spdlog/spdlog.h"

namespace voxserve::service {
namespace {

int EncodeThreads(int configured) {
  if (configured > 0) return configured;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

std::string_view ServiceHealthName(ServiceHealth health) {
  switch (health) {
    case ServiceHealth::kStarting:
      return "starting";
    case ServiceHealth::kReady:
      return "ready";
    case ServiceHealth::kDegraded:
      return "degraded";
    case ServiceHealth::kFailed:
      return "failed";
    case ServiceHealth::kDraining:
      return "draining";
  }
  return "unknown";
}

TtsService::TtsService(ServiceConfig config, core::MetricsRegistry& registry,
                       engine::EngineFactory engine_factory)
    : config_(std::move(config)),
      metrics_(registry),
      cache_(std::make_unique<ResponseCache>(config_.cache, registry)),
      scheduler_metrics_(registry),
      encode_pool_(EncodeThreads(config_.encode_threads)) {
  ModelHost* default_model = nullptr;
  std::vector<ModelHost*> hosts;
  for (const ModelConfig& model : config_.models) {
    models_.push_back(std::make_unique<ModelHost>(
        model, scheduler_metrics_.ForModel(model.engine.model_id), engine_factory));
    hosts.push_back(models_.back().get());
    if (model.engine.model_id == config_.default_model) default_model = hosts.back();
  }
  if (default_model == nullptr) default_model = hosts.front();
  catalog_ = std::make_unique<VoiceCatalog>(config_, std::move(hosts), default_model);
}

absl::StatusOr<std::unique_ptr<TtsService>> TtsService::Create(
    ServiceConfig config, core::MetricsRegistry& registry, engine::EngineFactory engine_factory) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::unique_ptr<TtsService> service(
      new TtsService(std::move(config), registry, std::move(engine_factory)));
  VoiceCatalog* catalog = service->catalog_.get();
  auto voices = VoiceRegistry::Create(
      service->config_.voices,
      [catalog](std::string_view model) { return catalog->FindModel(model); }, &registry);
  if (!voices.ok()) return voices.status();
  service->voices_ = *std::move(voices);
  // A deleted voice's id never comes back (a new registration gets a new one), so its entries
  // could never be hit again: free their memory at once.
  service->voices_->SetOnDeleted([cache = service->cache_.get()](const std::string& id) {
    cache->Invalidate(ClonedVoiceCacheTag(id));
  });
  std::map<std::string, std::vector<std::string>> lexicon_files;
  for (const ModelConfig& model : service->config_.models) {
    if (!model.lexicons.empty()) lexicon_files[model.engine.model_id] = model.lexicons;
  }
  auto dictionaries = PronunciationDictionaries::Create(service->config_.dictionaries,
                                                        service->config_.voices, lexicon_files);
  if (!dictionaries.ok()) return dictionaries.status();
  service->dictionaries_ = *std::move(dictionaries);
  if (store::DictionaryBackend* store = service->dictionaries_->store()) {
    // A version's rules never change, so its entries stay right; but a deleted dictionary's are
    // never asked for again, and "latest" now means another version: free them at once.
    store->SetOnChanged([cache = service->cache_.get()](const std::string& id) {
      cache->Invalidate(DictionaryTag(id));
    });
  }
  return service;
}

void TtsService::Shutdown() {
  // Schedulers stop first (their workers post to the encode pool), then the pool drains; the
  // models go only in the destructor: jobs finishing on the pool still point at their model.
  voices_.reset();  // finishes registrations being cloned: they use the engines
  for (auto& model : models_) model->Shutdown();
  encode_pool_.join();
}

TtsService::~TtsService() {
  Shutdown();
  models_.clear();
}

absl::Status TtsService::LoadModels() {
  absl::Status first_error;
  for (auto& model : models_) {
    if (draining_.load()) {
      first_error =
          absl::UnavailableError("draining began before model " + model->id() + " was loaded");
      break;
    }
    absl::Status status = model->Load();
    if (!status.ok() && config_.skip_broken_models) {
      spdlog::warn("model {} skipped (skip_broken_models): {}", model->id(),
                   std::string(status.message()));
      continue;
    }
    if (!status.ok() && first_error.ok()) {
      first_error = absl::Status(status.code(),
                                 "model " + model->id() + ": " + std::string(status.message()));
      // Reported at once (/health says "failed" while later models still load): a probe need
      // not wait for them to learn that this server will never be ready.
      SetStartupError(first_error);
    }
  }
  if (first_error.ok()) first_error = CheckVoiceAliases();
  if (first_error.ok()) first_error = CheckOpenAiVoices();
  if (!first_error.ok()) SetStartupError(first_error);
  loaded_.store(first_error.ok());
  return first_error;
}

// Aliases can only be checked against the voices of loaded engines. One whose model failed and
// was skipped is left alone (its requests get that model's 503).
absl::Status TtsService::CheckVoiceAliases() const {
  for (const auto& [name, alias] : config_.voice_aliases) {
    auto resolved = catalog_->Resolve(alias.model, name);
    if (resolved.ok() || resolved.status().code() == absl::StatusCode::kUnavailable) continue;
    std::string model = !alias.model.empty()             ? alias.model
                        : !config_.default_model.empty() ? config_.default_model
                                                         : models_.front()->id();
    return core::InvalidArgument("voice_aliases." + name + ": voice '" + alias.voice +
                                 "' does not exist in model '" + model +
                                 "' (GET /v1/voices lists the voices)");
  }
  return absl::OkStatus();
}

// As aliases: the targets the config set, against the default model once it has loaded. A name
// an alias also has is left alone (the alias wins), as is a default model that was skipped.
absl::Status TtsService::CheckOpenAiVoices() const {
  auto model = catalog_->FindModel("");
  if (!model.ok() || (*model)->state() != ModelState::kReady) return absl::OkStatus();
  for (const std::string& name : config_.configured_openai_voices) {
    if (config_.voice_aliases.contains(name)) continue;
    auto target = config_.openai_voices.find(name);
    if (target == config_.openai_voices.end() || (*model)->engine().AcceptsVoice(target->second)) {
      continue;
    }
    return core::InvalidArgument("openai_voices." + name + ": voice '" + target->second +
                                 "' does not exist in model '" + (*model)->id() +
                                 "' (GET /v1/voices lists the voices)");
  }
  return absl::OkStatus();
}

ServiceHealth TtsService::Health() const {
  if (draining_.load()) return ServiceHealth::kDraining;
  bool any_failed = std::any_of(models_.begin(), models_.end(), [](const auto& model) {
    return model->state() == ModelState::kFailed;
  });
  // An unreachable voice registry (PostgreSQL) degrades the server: everything but cloned voices
  // the replica has not cached still works.
  const bool voices_down = voices_ && !voices_->Problem().empty();
  // So does an unreachable dictionary registry: locators still speak from memory, changes wait.
  const bool dictionaries_down = dictionary_store() && !dictionary_store()->Problem().empty();
  if (Ready()) {
    return any_failed || voices_down || dictionaries_down ? ServiceHealth::kDegraded
                                                          : ServiceHealth::kReady;
  }
  // Only the startup error says "failed": it is set after the model's own state, so whoever
  // reads "failed" here then finds the failed model and the error beside it.
  if (!StartupError().empty()) return ServiceHealth::kFailed;
  return ServiceHealth::kStarting;
}

void TtsService::SetStartupError(const absl::Status& error) {
  std::lock_guard lock(startup_error_mutex_);
  startup_error_ = std::string(error.message());
}

std::string TtsService::StartupError() const {
  std::lock_guard lock(startup_error_mutex_);
  return startup_error_;
}

bool TtsService::Ready() const {
  if (!loaded_.load() || draining_.load()) return false;
  // A model whose every worker process is down (restarting) cannot serve.
  for (const auto& model : models_) {
    if (model->state() == ModelState::kReady && model->scheduler().LiveInstances() == 0) {
      return false;
    }
  }
  return true;
}

void TtsService::BeginDrain() { draining_.store(true); }

size_t TtsService::InFlight() const {
  std::lock_guard lock(in_flight_mutex_);
  return in_flight_;
}

bool TtsService::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(in_flight_mutex_);
  return idle_.wait_for(lock, timeout, [&] { return in_flight_ == 0; });
}

void TtsService::OnJobFinished() {
  std::lock_guard lock(in_flight_mutex_);
  --in_flight_;
  metrics_.in_flight.Set(static_cast<double>(in_flight_));
  if (in_flight_ == 0) idle_.notify_all();
}

std::vector<ModelStatus> TtsService::ModelStatuses() const {
  std::vector<ModelStatus> statuses;
  for (const auto& model : models_) {
    ModelStatus status;
    status.id = model->id();
    status.engine = model->config().engine.engine;
    status.state = model->state();
    status.error = model->error();
    // Until the model is ready, what its config asks for; then what it runs (a streaming
    // engine's `auto` is one worker, ModelHost::Load).
    status.instances = model->config().scheduling.ResolvedInstances();
    status.isolation = std::string(scheduler::IsolationName(model->config().scheduling.isolation));
    if (status.state == ModelState::kReady) {
      status.instances = model->scheduler().Instances();
      status.instances_live = model->scheduler().LiveInstances();
      status.instance_restarts = model->scheduler().Restarts();
      status.queue_depth = model->scheduler().QueueDepth();
      status.voices = model->engine().info().voices.size();
      if (model->engine().voice_cloner() != nullptr) status.capabilities.push_back("voice_cloning");
      status.max_batch_size = std::min(model->config().scheduling.max_batch_size,
                                       model->engine().info().max_batch_size);
    }
    statuses.push_back(std::move(status));
  }
  return statuses;
}

}  // namespace voxserve::service
