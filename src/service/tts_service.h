// TtsService: the transport-neutral heart of voxserve. REST, WebSocket and gRPC adapters call
// these methods; a feature written here is available on every protocol.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include <boost/asio/thread_pool.hpp>

#include "absl/status/statusor.h"
#include "core/metrics.h"
#include "scheduler/scheduler_metrics.h"
#include "service/model_host.h"
#include "service/service_config.h"
#include "service/service_metrics.h"
#include "service/synthesis_job.h"
#include "service/synthesis_request.h"
#include "service/voice_catalog.h"
#include "service/voice_filter.h"
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
};

// Safe cross thread: every public method may be called from any transport thread.
class TtsService {
 public:
  // Validates the configuration; models are loaded later by LoadModels().
  static absl::StatusOr<std::unique_ptr<TtsService>> Create(
      ServiceConfig config, core::MetricsRegistry& registry,
      engine::EngineFactory engine_factory = engine::CreateEngine);
  ~TtsService();

  // Loads and warms up every model in order; blocking, for the startup thread. A model that
  // fails stays listed as failed; the error is returned and readiness stays false.
  absl::Status LoadModels();

  // Ready: every model loaded and warmed up, and not draining.
  bool Ready() const;
  // From now on new requests get Unavailable (503); accepted ones run to completion.
  void BeginDrain();
  bool Draining() const { return draining_.load(); }
  size_t InFlight() const;
  // Blocks until no request is in flight or the timeout passes; true when idle.
  bool WaitIdle(std::chrono::milliseconds timeout);

  // Validates, splits and queues a request. Returns the running job, or the reason it was
  // refused (bad input, unknown model or voice, queue full, draining) — then the sink is never
  // called. Never blocks on synthesis: safe on I/O threads.
  absl::StatusOr<std::shared_ptr<SynthesisJob>> Synthesize(SynthesisRequest request,
                                                           std::shared_ptr<SynthesisSink> sink);

  // For transports that receive text in pieces and cut it into sentences themselves (gRPC
  // bidirectional streaming, WebSocket; see text::TextAccumulator): resolves `model` and `voice`
  // as Synthesize would (NotFound; Unavailable while loading or draining; PermissionDenied for a
  // model outside `allowed_models`) and returns the sentence splitter of the voice's language,
  // which lives as long as the service. The other options are checked by each Synthesize call.
  absl::StatusOr<const text::SentenceSplitter*> SplitterForVoice(
      std::string_view model, std::string_view voice,
      const std::vector<std::string>& allowed_models = {});

  // The voices `filter` asks for (all by default); see VoiceFilter for the matching rules.
  std::vector<VoiceListing> ListVoices(const VoiceFilter& filter = {}) const;
  std::vector<ModelStatus> ModelStatuses() const;
  const ServiceConfig& config() const { return config_; }

 private:
  TtsService(ServiceConfig config, core::MetricsRegistry& registry,
             engine::EngineFactory engine_factory);
  // The splitter for a voice's language, created on first use. Internal error when ICU can
  // build neither that locale's rules nor the English ones (its data is missing or broken).
  absl::StatusOr<const text::SentenceSplitter*> SplitterFor(const std::string& language);
  absl::Status Reject(const std::string& model, const absl::Status& status);
  void OnJobFinished();

  const ServiceConfig config_;
  ServiceMetrics metrics_;
  scheduler::SchedulerMetricFamilies scheduler_metrics_;
  std::vector<std::unique_ptr<ModelHost>> models_;
  std::unique_ptr<VoiceCatalog> catalog_;
  boost::asio::thread_pool encode_pool_;  // resampling and encoding, off the I/O threads

  std::atomic<bool> draining_{false};
  std::atomic<bool> loaded_{false};

  mutable std::mutex in_flight_mutex_;
  std::condition_variable idle_;
  size_t in_flight_ = 0;  // guarded by in_flight_mutex_

  std::mutex splitters_mutex_;
  std::map<std::string, std::unique_ptr<text::SentenceSplitter>> splitters_;  // by ICU locale
};

}  // namespace voxserve::service
