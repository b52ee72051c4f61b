// TtsService: the transport-neutral heart of voxserve. REST, WebSocket and gRPC adapters call
// these methods; a feature written here is available on every protocol.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/metrics.h"
#include "scheduler/scheduler_metrics.h"
#include "service/model_host.h"
#include "service/pending_job.h"
#include "service/pronunciation_dictionaries.h"
#include "service/response_cache.h"
#include "service/service_config.h"
#include "service/service_metrics.h"
#include "service/synthesis_job.h"
#include "service/synthesis_request.h"
#include "service/voice_catalog.h"
#include "service/voice_filter.h"
#include "service/voice_registry.h"
#include "text/sentence_splitter.h"

namespace voxserve::service {

struct ModelStatus {
  std::string id;
  std::string engine;
  ModelState state = ModelState::kLoading;
  std::string error;
  size_t queue_depth = 0;
  size_t voices = 0;
  int instances = 0;
  int max_batch_size = 0;
  std::string isolation;   // "thread" or "process" (scheduler::Isolation)
  int instances_live = 0;  // instances able to take work now (0 until ready)
  int instance_restarts = 0;
  // Optional engine features clients can use, e.g. "voice_cloning" (Engine::voice_cloner()).
  std::vector<std::string> capabilities;
};

// The server as a whole, for /health and /health/ready (docs/operations.md "Health"). Ready and
// degraded serve (degraded: a model failed and was skipped, `skip_broken_models`); starting, failed
// and draining do not. Failed is permanent: a model failed without `skip_broken_models`, or a
// configured voice alias names a voice no model has; only a restart with a fixed config helps.
enum class ServiceHealth { kStarting, kReady, kDegraded, kFailed, kDraining };
std::string_view ServiceHealthName(ServiceHealth health);

// Safe cross thread: every public method may be called from any transport thread.
class TtsService {
 public:
  // Validates the configuration; models are loaded later by LoadModels().
  static absl::StatusOr<std::unique_ptr<TtsService>> Create(
      ServiceConfig config, core::MetricsRegistry& registry,
      engine::EngineFactory engine_factory = engine::CreateEngine);
  ~TtsService();

  // Loads and warms up every model in order, then checks the configured voice aliases against
  // the loaded voices; blocking, for the startup thread. A model that fails stays listed as
  // failed; the error is returned, kept as StartupError() and readiness stays false. Models not
  // yet started when draining begins are not loaded.
  absl::Status LoadModels();

  ServiceHealth Health() const;
  // Why the server will never become ready (see ServiceHealth::kFailed); empty otherwise.
  std::string StartupError() const;

  // Ready: every model loaded and warmed up, and not draining.
  bool Ready() const;
  // From now on new requests get Unavailable (503); accepted ones run to completion.
  void BeginDrain();
  bool Draining() const { return draining_.load(); }
  size_t InFlight() const;
  // Blocks until no request is in flight or the timeout passes; true when idle.
  bool WaitIdle(std::chrono::milliseconds timeout);
  // Stops the schedulers (unfinished requests end with Unavailable) and joins the encode pool.
  // The service object stays valid for what still holds its jobs (a transport's handlers not
  // yet destroyed: a job's strand belongs to the pool), so transports are destroyed after this
  // and before the service. Idempotent; the destructor calls it too.
  void Shutdown();

  // Validates, splits and queues a request. Returns the running job, or the reason it was
  // refused (bad input, unknown model or voice, queue full, draining) — then the sink is never
  // called. Never blocks on synthesis: safe on I/O threads.
  absl::StatusOr<std::shared_ptr<SynthesisJob>> Synthesize(SynthesisRequest request,
                                                           std::shared_ptr<SynthesisSink> sink);

  // Synthesize for a request that carries an inline voice prompt (prompt_audio): the prompt is
  // cloned for this request on the voice registry's workers (never on the caller's thread, never
  // stored), then the request goes on as Synthesize's, spoken with it by the model that cloned
  // it (request.model's). Returns at once. The job attaches to the returned PendingJob when it
  // starts; a refusal at any point (Synthesize's, or the prompt's: VoiceRegistry::
  // CloneForRequest) reaches sink->OnComplete instead, so the sink hears the end exactly once
  // either way. Counted in flight from the start, so a drain waits for the cloning too.
  std::shared_ptr<PendingJob> SynthesizeWithPrompt(SynthesisRequest request,
                                                   std::shared_ptr<SynthesisSink> sink);

  // For SpeechSession, which cuts incremental text into sentences itself: resolves the
  // request's model and voice (and a cloned voice's voice_mode with its instructions) as
  // Synthesize would (NotFound; InvalidArgument; Unavailable while loading or draining;
  // PermissionDenied for a model outside allowed_models) and returns the sentence splitter of
  // the voice's language, which lives as long as the service. The text is not looked at.
  absl::StatusOr<const text::SentenceSplitter*> SplitterForVoice(const SynthesisRequest& request);

  // A synthesis request its transport could not parse (invalid JSON, a missing or wrong-typed
  // field), or a stream whose options fail their checks before any sentence, never reaches
  // Synthesize; the transport reports it here so every refused request is
  // counted once in requests_rejected_total. Returns `status`.
  absl::Status RejectUnparsed(const absl::Status& status);

  // The voices `filter` asks for (all by default); see VoiceFilter for the matching rules.
  std::vector<VoiceListing> ListVoices(const VoiceFilter& filter = {}) const;
  std::vector<ModelStatus> ModelStatuses() const;
  const ServiceConfig& config() const { return config_; }

  // Cloned voices: register, list, get, delete (docs/voice-cloning.md). Lives as long as the
  // service.
  VoiceRegistry& voices() { return *voices_; }
  const VoiceRegistry* voice_registry() const { return voices_.get(); }  // null before Create ends
  // The response cache (docs/response-cache.md); lives as long as the service.
  ResponseCache& response_cache() { return *cache_; }
  // Pronunciation dictionaries: the store the API manages and the models' lexicons
  // (docs/pronunciation-dictionaries.md); lives as long as the service.
  PronunciationDictionaries& dictionaries() { return *dictionaries_; }
  // The API's dictionary store (/health); null while it is off or before Create ends.
  const store::DictionaryBackend* dictionary_store() const {
    return dictionaries_ ? dictionaries_->store() : nullptr;
  }

 private:
  TtsService(ServiceConfig config, core::MetricsRegistry& registry,
             engine::EngineFactory engine_factory);
  // The splitter for a voice's language, created on first use. Internal error when ICU can
  // build neither that locale's rules nor the English ones (its data is missing or broken).
  absl::StatusOr<const text::SentenceSplitter*> SplitterFor(const std::string& language);
  absl::Status Reject(const std::string& model, const absl::Status& status);
  absl::Status CheckVoiceAliases() const;
  absl::Status CheckOpenAiVoices() const;
  void SetStartupError(const absl::Status& error);
  // Fills request.voice_profile when request.voice names a cloned voice; then Unimplemented
  // until engines take profiles (issue 12 part 2). OK and nothing set for other voices.
  absl::Status ResolveClonedVoice(SynthesisRequest& request);
  // The model and voice a request names: its cloned voice (ResolveClonedVoice ran) or the
  // catalog's.
  absl::StatusOr<ResolvedVoice> ResolveVoice(const SynthesisRequest& request) const;
  std::vector<VoiceListing> ClonedVoiceListings() const;
  void OnJobFinished();
  // The text the engine gets: control characters as spaces, then normalized (numbers, dates,
  // units ... as words) for engines that need it, in the voice's language; `request_normalize`
  // (SynthesisRequest::normalize_text), when set, decides instead of the config and the engine.
  std::string SpeechText(const std::string& text, const ResolvedVoice& voice,
                         std::optional<bool> request_normalize) const;
  // The segments of an SSML request, or of a plain one that pronunciation dictionaries rewrite
  // (ssml_plan.h), into plan.segments and plan.styles.
  absl::Status PlanItems(const SynthesisRequest& request, bool ssml, const ResolvedVoice& voice,
                         const text::SentenceSplitter& splitter, const RequestLexicons& lexicons,
                         JobPlan& plan) const;
  // Sets plan.replay (a stored answer to replay) or plan.cache (record and store this one) when
  // the cache is on, the request allows it and its audio is a function of what it asks.
  void UseResponseCache(const SynthesisRequest& request, const RequestLexicons& lexicons,
                        int output_sample_rate, JobPlan& plan);

  const ServiceConfig config_;
  ServiceMetrics metrics_;
  std::unique_ptr<ResponseCache> cache_;  // outlives every job (they point at it)
  scheduler::SchedulerMetricFamilies scheduler_metrics_;
  std::vector<std::unique_ptr<ModelHost>> models_;
  std::unique_ptr<VoiceCatalog> catalog_;
  std::unique_ptr<VoiceRegistry> voices_;  // destroyed before the models (declared after them)
  std::unique_ptr<PronunciationDictionaries> dictionaries_;
  boost::asio::thread_pool encode_pool_;  // resampling and encoding, off the I/O threads

  std::atomic<bool> draining_{false};
  std::atomic<bool> loaded_{false};
  mutable std::mutex startup_error_mutex_;
  std::string startup_error_;  // guarded by startup_error_mutex_

  mutable std::mutex in_flight_mutex_;
  std::condition_variable idle_;
  size_t in_flight_ = 0;  // guarded by in_flight_mutex_

  std::mutex splitters_mutex_;
  std::map<std::string, std::unique_ptr<text::SentenceSplitter>> splitters_;  // by ICU locale
};

}  // namespace voxserve::service
