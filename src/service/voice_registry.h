// Voice cloning as a service (docs/voice-cloning.md): registers a voice by running its model's
// VoiceCloner once on a worker thread and storing the profile (VoiceStore); lists, gets and
// deletes stored voices; finds the cloned voice a synthesis request names. Transports call it
// through TtsService::voices().
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "service/model_host.h"
#include "service/test_voice_cloner.h"
#include "store/voice_backend.h"
#include "store/voice_store_metrics.h"

namespace voxserve::service {

struct VoiceRegistration {
  std::string model;       // as the client named it; empty or an OpenAI name = the default model
  std::string name;        // see store::ValidateVoiceName
  std::string transcript;  // what the sample says (voxserve's extension; may be empty)
  std::string audio;       // the uploaded file, as sent
  // From the caller's API key, as SynthesisRequest::allowed_models; empty = every model.
  std::vector<std::string> allowed_models;
};

// Called exactly once with the stored voice or why nothing was stored.
using RegistrationDone = std::function<void(absl::StatusOr<store::StoredVoice>)>;

// A voice prompt cloned for one request (an inline prompt: vLLM-Omni's ref_audio / ref_text).
struct ClonedPrompt {
  std::string model_id;  // the model that cloned it, the one to synthesize with
  std::shared_ptr<const engine::VoiceProfile> profile;
};
using PromptCloned = std::function<void(absl::StatusOr<ClonedPrompt>)>;

// Safe cross thread. Owned by TtsService; the model hosts outlive it. Cloning runs on its own
// small pool (max_pending threads at most), never on the caller's thread.
class VoiceRegistry {
 public:
  // The model a name stands for (VoiceCatalog::FindModel).
  using ModelLookup = std::function<absl::StatusOr<ModelHost*>(std::string_view)>;

  // `config.enabled()` false: cloning is off (Register answers Unimplemented, lists are
  // empty). The dir backend fails when the directory cannot be created or read; the postgres
  // backend only without a DSN (an unreachable database is Problem(), not a failure). Metrics go
  // into `metrics` when given (it must outlive the registry).
  static absl::StatusOr<std::unique_ptr<VoiceRegistry>> Create(
      store::VoiceStoreConfig config, ModelLookup lookup, core::MetricsRegistry* metrics = nullptr);
  ~VoiceRegistry();  // waits for registrations being cloned

  bool enabled() const { return store_ != nullptr; }

  // Refuses at once (done runs before Register returns) what fails its checks: cloning off
  // (Unimplemented), audio over max_upload_bytes (PayloadTooLarge) or empty, a bad name, an
  // unknown model (NotFound), one outside allowed_models (PermissionDenied), one still loading
  // (Unavailable), one that cannot clone (InvalidArgument "model_cannot_clone"), a duplicate
  // name (AlreadyExists), a full store (InsufficientStorage), too many registrations at once
  // (QueueFull). Otherwise clones on a worker and calls done there: the cloner's
  // InvalidArgument or OutOfRange for bad audio, or the stored voice.
  void Register(VoiceRegistration registration, RegistrationDone done);

  // Clones a voice prompt for one request and stores nothing: Register's checks of the audio
  // (named "ref_audio" in errors), the transcript ("ref_text"), the model and the key, its
  // workers and its max_pending (QueueFull beyond), none of the store's (it works with cloning's
  // store off). `done` runs once: before this returns for a refusal, else on a worker.
  void CloneForRequest(VoiceRegistration prompt, PromptCloned done);

  std::vector<store::StoredVoice> List(std::string_view model = {}) const;  // model id; empty = all
  absl::StatusOr<store::StoredVoice> Get(std::string_view id) const;        // NotFound
  // NotFound; Unavailable "voice_store_unavailable" while the database is unreachable. Waits for
  // the store: transports call DeleteAsync.
  absl::Status Delete(std::string_view id);
  // Delete on the store's own thread; `done` runs there, once.
  void DeleteAsync(std::string id, std::function<void(absl::Status)> done);
  // Runs after each Delete that removed a voice, with its id, on Delete's thread, and for each
  // voice another replica deleted (the postgres backend), on the backend's listener thread
  // (TtsService drops the voice's cached responses). Set once, before the registry is used.
  void SetOnDeleted(std::function<void(const std::string& id)> on_deleted);

  // Why the store cannot serve now (e.g. "voices.backend postgres: connection refused"); empty
  // when it can, and when cloning is off. /health is degraded while it is not empty.
  std::string Problem() const;
  std::string_view BackendName() const;  // "dir", "postgres"; "" when cloning is off
  // The cloned voice `voice` names within model `model_id`: its id, or its name (ASCII
  // case-insensitive). For synthesis and the voice catalog.
  std::optional<store::StoredVoice> Find(std::string_view model_id, std::string_view voice) const;
  // The stored profile, read from disk on first use and then kept (the last kProfileCacheSize
  // used), so synthesis with a cloned voice reads no file on the I/O thread after its first
  // request. NotFound once deleted.
  absl::StatusOr<std::shared_ptr<const engine::VoiceProfile>> LoadProfile(
      std::string_view id) const;
  static constexpr size_t kProfileCacheSize = 32;  // ~0.3 MB each for a 10 s prompt

 private:
  VoiceRegistry(store::VoiceStoreConfig config, ModelLookup lookup,
                std::unique_ptr<store::VoiceBackend> store,
                std::unique_ptr<core::MetricsRegistry> own_metrics,
                std::unique_ptr<store::VoiceStoreMetrics> metrics);
  void Remember(const std::string& id, std::shared_ptr<const engine::VoiceProfile> profile) const;
  // A deleted voice: its cached profile dropped, on_deleted_ told.
  void Forget(std::string_view id);
  absl::StatusOr<engine::VoiceCloner*> ClonerFor(ModelHost& model);
  // Register's and CloneForRequest's checks of the sample and transcript, errors naming the
  // given fields.
  absl::Status CheckPrompt(const VoiceRegistration& prompt, const std::string& audio_field,
                           const std::string& transcript_field) const;

  const store::VoiceStoreConfig config_;
  ModelLookup lookup_;
  std::unique_ptr<core::MetricsRegistry> own_metrics_;  // when the caller gave none
  std::unique_ptr<store::VoiceStoreMetrics> metrics_;
  std::unique_ptr<store::VoiceBackend> store_;  // null when cloning is off
  TestVoiceCloner test_cloner_;                 // used only with config_.test_cloner
  std::atomic<int> pending_{0};                 // registrations refused beyond config_.max_pending
  // Most recently used first. deletions_ counts Deletes: a profile read while one happened is
  // not cached (it may be the deleted voice's).
  mutable std::mutex cache_mutex_;
  mutable std::list<std::pair<std::string, std::shared_ptr<const engine::VoiceProfile>>> cache_;
  uint64_t deletions_ = 0;  // guarded by cache_mutex_
  std::function<void(const std::string&)> on_deleted_;
  boost::asio::thread_pool pool_;
  boost::asio::thread_pool store_pool_{1};  // deletions: never queued behind a slow cloning
};

}  // namespace voxserve::service
