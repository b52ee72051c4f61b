#include "service/voice_registry.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>

#include "core/error.h"
#include "spdlog/spdlog.h"
#include "store/open_backends.h"
#include "text/utf8.h"

namespace voxserve::service {
namespace {

// A transcript is one prompt utterance (30 s of speech is ~100 words); 4096 characters bounds
// what is kept in the file, as for synthesis instructions.
constexpr size_t kMaxTranscriptChars = 4096;

absl::Status CheckAllowed(const std::vector<std::string>& allowed, const std::string& model_id,
                          std::string_view asked) {
  if (allowed.empty() || std::find(allowed.begin(), allowed.end(), model_id) != allowed.end() ||
      std::find(allowed.begin(), allowed.end(), asked) != allowed.end()) {
    return absl::OkStatus();
  }
  return core::PermissionDenied("this API key may not use model '" + model_id + "'", "model",
                                "model_not_allowed");
}

// A cloner's refusal of the recording (undecodable, silent, too long) names the field the
// client sent it in (audio_sample, or ref_audio for an inline prompt) and gets a code:
// `audio_too_long` past the engine's length, else the cloner's own (`silent_audio`) or
// `invalid_audio`. A registration keeps the status code (OUT_OF_RANGE for too long, as gRPC
// always said); an inline prompt is INVALID_ARGUMENT, like the rest of its request's mistakes.
absl::Status AsPromptAudioError(const absl::Status& status, const std::string& field) {
  const bool about_audio = status.code() == absl::StatusCode::kInvalidArgument ||
                           status.code() == absl::StatusCode::kOutOfRange;
  const core::ErrorDetail detail = core::DetailOf(status);
  if (!about_audio || !(detail.param.empty() || detail.param == "audio_sample")) return status;
  std::string code = detail.code;
  if (status.code() == absl::StatusCode::kOutOfRange) {
    code = "audio_too_long";
  } else if (code == core::DefaultCode(status.code())) {
    code = "invalid_audio";  // the decoder's plain InvalidArgument
  }
  std::string message(status.message());
  if (!message.starts_with(field + ": ")) message = field + ": " + message;
  const bool inline_prompt = field == "ref_audio";
  return core::MakeError(inline_prompt ? absl::StatusCode::kInvalidArgument : status.code(),
                         message, field, code);
}

int PoolThreads(const store::VoiceStoreConfig& config) {
  return config.enabled() ? std::clamp(config.max_pending, 1, 4) : 1;
}

}  // namespace

VoiceRegistry::VoiceRegistry(store::VoiceStoreConfig config, ModelLookup lookup,
                             std::unique_ptr<store::VoiceBackend> store,
                             std::unique_ptr<core::MetricsRegistry> own_metrics,
                             std::unique_ptr<store::VoiceStoreMetrics> metrics)
    : config_(std::move(config)),
      lookup_(std::move(lookup)),
      own_metrics_(std::move(own_metrics)),
      metrics_(std::move(metrics)),
      store_(std::move(store)),
      pool_(PoolThreads(config_)) {}

VoiceRegistry::~VoiceRegistry() {
  // Waits for a callback under way: it uses members destroyed before store_.
  if (store_) store_->SetOnRemovedElsewhere(nullptr);
  pool_.join();
  store_pool_.join();
}

absl::StatusOr<std::unique_ptr<VoiceRegistry>> VoiceRegistry::Create(
    store::VoiceStoreConfig config, ModelLookup lookup, core::MetricsRegistry* metrics) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::unique_ptr<core::MetricsRegistry> own_metrics;
  if (metrics == nullptr) {
    own_metrics = std::make_unique<core::MetricsRegistry>();
    metrics = own_metrics.get();
  }
  auto store_metrics = std::make_unique<store::VoiceStoreMetrics>(*metrics);
  auto store = store::OpenVoiceBackend(config, store_metrics.get());
  if (!store.ok()) return store.status();
  return std::unique_ptr<VoiceRegistry>(new VoiceRegistry(std::move(config), std::move(lookup),
                                                          *std::move(store), std::move(own_metrics),
                                                          std::move(store_metrics)));
}

absl::StatusOr<engine::VoiceCloner*> VoiceRegistry::ClonerFor(ModelHost& model) {
  if (model.state() != ModelState::kReady) {
    return core::MakeError(absl::StatusCode::kUnavailable,
                           "model '" + model.id() + "' is not ready (" +
                               std::string(ModelStateName(model.state())) + ")",
                           "model", "model_not_ready");
  }
  if (engine::VoiceCloner* cloner = model.engine().voice_cloner()) return cloner;
  if (config_.test_cloner) return &test_cloner_;
  return core::InvalidArgument("model '" + model.id() + "' (engine " +
                                   model.config().engine.engine + ") cannot clone voices",
                               "model", "model_cannot_clone");
}

absl::Status VoiceRegistry::CheckPrompt(const VoiceRegistration& prompt,
                                        const std::string& audio_field,
                                        const std::string& transcript_field) const {
  if (prompt.audio.size() > config_.max_upload_bytes) {
    return core::PayloadTooLarge(audio_field + " is " + std::to_string(prompt.audio.size()) +
                                     " bytes; at most " + std::to_string(config_.max_upload_bytes) +
                                     " are accepted",
                                 audio_field);
  }
  if (prompt.audio.empty()) {
    return core::InvalidArgument(audio_field + " is missing or empty", audio_field,
                                 "missing_audio");
  }
  if (absl::Status status = text::ValidateUtf8(prompt.transcript, transcript_field); !status.ok()) {
    return status;
  }
  if (text::CountCodePoints(prompt.transcript) > kMaxTranscriptChars) {
    return core::PayloadTooLarge(transcript_field + " is longer than 4096 characters",
                                 transcript_field);
  }
  return absl::OkStatus();
}

void VoiceRegistry::Register(VoiceRegistration registration, RegistrationDone done) {
  if (!store_) {
    return done(core::MakeError(absl::StatusCode::kUnimplemented,
                                "voice cloning is off on this server (set voices.dir, or "
                                "voices.backend: postgres, to enable it)",
                                {}, "voice_cloning_off"));
  }
  if (absl::Status status = CheckPrompt(registration, "audio_sample", "transcript"); !status.ok()) {
    return done(status);
  }
  if (absl::Status status = store::ValidateVoiceName(registration.name); !status.ok())
    return done(status);
  auto model = lookup_(registration.model);
  if (!model.ok()) return done(model.status());
  ModelHost& host = **model;
  if (absl::Status status =
          CheckAllowed(registration.allowed_models, host.id(), registration.model);
      !status.ok()) {
    return done(status);
  }
  auto cloner = ClonerFor(host);
  if (!cloner.ok()) return done(cloner.status());
  auto reservation = store_->Reserve(host.id(), registration.name);
  if (!reservation.ok()) return done(reservation.status());
  if (pending_.fetch_add(1) >= config_.max_pending) {
    pending_.fetch_sub(1);
    return done(core::QueueFull("too many voice registrations in progress; retry shortly", 1));
  }
  // The reservation holds the name while the frontend runs, so a second registration of it is
  // refused at once instead of after its own (expensive) cloning.
  std::shared_ptr<store::VoiceReservation> held = *std::move(reservation);
  boost::asio::post(pool_, [this, held, cloner = *cloner, model_id = host.id(),
                            registration = std::move(registration),
                            done = std::move(done)]() mutable {
    engine::VoicePrompt prompt;
    prompt.audio = std::span(reinterpret_cast<const uint8_t*>(registration.audio.data()),
                             registration.audio.size());
    prompt.transcript = registration.transcript;
    absl::StatusOr<engine::VoiceProfile> profile = cloner->CloneVoice(prompt);
    absl::StatusOr<store::StoredVoice> stored = core::Internal("voice cloner returned nothing");
    if (!profile.ok()) {
      stored = AsPromptAudioError(profile.status(), "audio_sample");
    } else {
      store::VoiceMetadata metadata;
      metadata.family = profile->family;
      metadata.transcript = registration.transcript;
      metadata.prompt_seconds = profile->prompt_seconds;
      const auto start = std::chrono::steady_clock::now();
      stored = store_->Commit(*held, model_id, registration.name, std::move(metadata), *profile);
      // The postgres backend times its own operations (without the wait for its connection).
      if (store_->BackendName() == "dir") {
        metrics_->operation_seconds.WithLabels({"dir", "register"})
            .Observe(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (!stored.ok() && stored.status().code() == absl::StatusCode::kInternal) {
          metrics_->errors.WithLabels({"dir", "register"}).Increment();
        }
      }
      if (stored.ok()) {
        // This replica's first synthesis with it needs no read of the store.
        Remember(stored->metadata.id,
                 std::make_shared<const engine::VoiceProfile>(*std::move(profile)));
      }
    }
    if (stored.ok()) {
      spdlog::info("voices: registered {} '{}' for model {} ({} bytes)", stored->metadata.id,
                   stored->metadata.name, model_id, stored->file_bytes);
    } else if (stored.status().code() == absl::StatusCode::kInternal) {
      spdlog::error("voices: registering '{}' failed: {}", registration.name,
                    std::string(stored.status().message()));
    }
    // The name is free again (or taken for good) before the caller hears back: a client that
    // retries at once after a failure must not meet its own reservation.
    held.reset();
    pending_.fetch_sub(1);
    done(std::move(stored));
  });
}

void VoiceRegistry::CloneForRequest(VoiceRegistration prompt, PromptCloned done) {
  if (absl::Status status = CheckPrompt(prompt, "ref_audio", "ref_text"); !status.ok()) {
    return done(status);
  }
  auto model = lookup_(prompt.model);
  if (!model.ok()) return done(model.status());
  ModelHost& host = **model;
  if (absl::Status status = CheckAllowed(prompt.allowed_models, host.id(), prompt.model);
      !status.ok()) {
    return done(status);
  }
  auto cloner = ClonerFor(host);
  if (!cloner.ok()) return done(cloner.status());
  if (pending_.fetch_add(1) >= config_.max_pending) {
    pending_.fetch_sub(1);
    return done(core::QueueFull("too many voice prompts being cloned; retry shortly", 1));
  }
  boost::asio::post(pool_, [this, cloner = *cloner, model_id = host.id(),
                            prompt = std::move(prompt), done = std::move(done)]() mutable {
    engine::VoicePrompt voice_prompt;
    voice_prompt.audio =
        std::span(reinterpret_cast<const uint8_t*>(prompt.audio.data()), prompt.audio.size());
    voice_prompt.transcript = prompt.transcript;
    absl::StatusOr<engine::VoiceProfile> profile = cloner->CloneVoice(voice_prompt);
    pending_.fetch_sub(1);
    if (!profile.ok()) return done(AsPromptAudioError(profile.status(), "ref_audio"));
    done(ClonedPrompt{model_id, std::make_shared<const engine::VoiceProfile>(*std::move(profile))});
  });
}

std::vector<store::StoredVoice> VoiceRegistry::List(std::string_view model) const {
  return store_ ? store_->List(model) : std::vector<store::StoredVoice>{};
}

absl::StatusOr<store::StoredVoice> VoiceRegistry::Get(std::string_view id) const {
  if (store_) {
    if (auto voice = store_->Get(id)) return *voice;
  }
  return core::NotFound("no cloned voice " + core::Quoted(id), "voice_id", "voice_not_found");
}

void VoiceRegistry::DeleteAsync(std::string id, std::function<void(absl::Status)> done) {
  boost::asio::post(store_pool_,
                    [this, id = std::move(id), done = std::move(done)] { done(Delete(id)); });
}

std::string VoiceRegistry::Problem() const { return store_ ? store_->Problem() : std::string(); }

std::string_view VoiceRegistry::BackendName() const {
  return store_ ? store_->BackendName() : std::string_view();
}

absl::Status VoiceRegistry::Delete(std::string_view id) {
  if (!store_) {
    return core::NotFound("no cloned voice " + core::Quoted(id), "voice_id", "voice_not_found");
  }
  absl::Status status = store_->Delete(id);
  if (status.ok()) {
    spdlog::info("voices: deleted {}", std::string(id));
    Forget(id);
  }
  return status;
}

void VoiceRegistry::Forget(std::string_view id) {
  {
    std::lock_guard lock(cache_mutex_);
    ++deletions_;
    std::erase_if(cache_, [id](const auto& entry) { return entry.first == id; });
  }
  if (on_deleted_) on_deleted_(std::string(id));
}

void VoiceRegistry::SetOnDeleted(std::function<void(const std::string& id)> on_deleted) {
  on_deleted_ = std::move(on_deleted);
  if (!store_) return;
  // Another replica's deletion (the postgres backend's NOTIFY or resync) is forgotten here as a
  // local one: its profile and, through on_deleted_, its cached answers. Set after on_deleted_:
  // the store's lock publishes it to the listener thread.
  store_->SetOnRemovedElsewhere([this](const std::string& id) {
    spdlog::info("voices: {} was deleted by another replica", id);
    Forget(id);
  });
}

std::optional<store::StoredVoice> VoiceRegistry::Find(std::string_view model_id,
                                                      std::string_view voice) const {
  if (!store_ || voice.empty()) return std::nullopt;
  if (auto by_id = store_->Get(voice); by_id && by_id->metadata.model == model_id) return by_id;
  return store_->FindByName(model_id, voice);
}

absl::StatusOr<std::shared_ptr<const engine::VoiceProfile>> VoiceRegistry::LoadProfile(
    std::string_view id) const {
  if (!store_)
    return core::NotFound("no cloned voice " + core::Quoted(id), "voice", "voice_not_found");
  uint64_t deletions = 0;
  {
    std::lock_guard lock(cache_mutex_);
    auto hit = std::find_if(cache_.begin(), cache_.end(),
                            [id](const auto& entry) { return entry.first == id; });
    if (hit != cache_.end()) {
      cache_.splice(cache_.begin(), cache_, hit);
      metrics_->profile_cache.WithLabels({"hit"}).Increment();
      return hit->second;
    }
    deletions = deletions_;
  }
  metrics_->profile_cache.WithLabels({"miss"}).Increment();
  // Outside the lock: a file read and its checksum, or one query.
  const auto start = std::chrono::steady_clock::now();
  auto loaded = store_->LoadProfile(id);
  if (store_->BackendName() == "dir") {
    metrics_->operation_seconds.WithLabels({"dir", "load_profile"})
        .Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (!loaded.ok()) return loaded.status();
  auto profile = std::make_shared<const engine::VoiceProfile>(*std::move(loaded));
  std::lock_guard lock(cache_mutex_);
  if (deletions == deletions_) {
    std::erase_if(cache_, [id](const auto& entry) { return entry.first == id; });  // a racing miss
    cache_.emplace_front(std::string(id), profile);
    if (cache_.size() > kProfileCacheSize) cache_.pop_back();
  }
  return profile;
}

void VoiceRegistry::Remember(const std::string& id,
                             std::shared_ptr<const engine::VoiceProfile> profile) const {
  std::lock_guard lock(cache_mutex_);
  std::erase_if(cache_, [&id](const auto& entry) { return entry.first == id; });
  cache_.emplace_front(id, std::move(profile));
  if (cache_.size() > kProfileCacheSize) cache_.pop_back();
}

}  // namespace voxserve::service
