// A TtsService over a FakeEngine, and a sink that records what the service delivers.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "service/tts_service.h"
#include "support/fake_engine.h"

namespace voxserve::service {

// Safe cross thread: the service calls it on its threads, the test reads it.
class RecordingSink : public SynthesisSink {
 public:
  void OnStart(int output_sample_rate) override {
    std::lock_guard lock(mutex_);
    start_rate_ = output_sample_rate;
  }
  void OnCacheResult(CacheResult result) override {
    std::lock_guard lock(mutex_);
    cache_results_.push_back(result);
  }
  void OnAudio(std::string bytes) override {
    std::lock_guard lock(mutex_);
    chunks_.push_back(std::move(bytes));
    changed_.notify_all();
  }
  void OnTimings(const SegmentTimings& timings) override {
    std::lock_guard lock(mutex_);
    timings_.push_back(timings);
    timings_after_chunks_.push_back(chunks_.size());
  }
  void OnComplete(const absl::Status& status, const SynthesisSummary& summary) override {
    std::lock_guard lock(mutex_);
    status_ = status;
    summary_ = summary;
    ++completions_;
    changed_.notify_all();
  }
  size_t BufferedBytes() const override { return buffered.load(); }

  bool WaitComplete(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return completions_ > 0; });
  }
  bool WaitChunks(size_t count, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return chunks_.size() >= count; });
  }
  absl::Status status() const {
    std::lock_guard lock(mutex_);
    return status_;
  }
  SynthesisSummary summary() const {
    std::lock_guard lock(mutex_);
    return summary_;
  }
  int completions() const {
    std::lock_guard lock(mutex_);
    return completions_;
  }
  int start_rate() const {
    std::lock_guard lock(mutex_);
    return start_rate_;
  }
  std::vector<CacheResult> cache_results() const {
    std::lock_guard lock(mutex_);
    return cache_results_;
  }
  std::vector<std::string> chunks() const {
    std::lock_guard lock(mutex_);
    return chunks_;
  }
  std::vector<SegmentTimings> timings() const {
    std::lock_guard lock(mutex_);
    return timings_;
  }
  // How many OnAudio calls had come before each OnTimings.
  std::vector<size_t> timings_after_chunks() const {
    std::lock_guard lock(mutex_);
    return timings_after_chunks_;
  }
  std::string bytes() const {
    std::lock_guard lock(mutex_);
    std::string all;
    for (const std::string& chunk : chunks_) all += chunk;
    return all;
  }

  std::atomic<size_t> buffered{0};  // what the "transport" claims it still holds

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> chunks_;
  std::vector<SegmentTimings> timings_;
  std::vector<size_t> timings_after_chunks_;
  absl::Status status_;
  SynthesisSummary summary_;
  int completions_ = 0;
  int start_rate_ = 0;
  std::vector<CacheResult> cache_results_;  // one per OnCacheResult
};

// The run-length sequence of distinct sample values in a non-streamed 16-bit WAV (after its
// 44-byte header): with FakeEngine's fill_from_first_byte this is the order of the segments.
inline std::vector<int16_t> SegmentLevels(const std::string& wav) {
  std::vector<int16_t> levels;
  for (size_t offset = 44; offset + 1 < wav.size(); offset += 2) {
    int16_t sample;
    std::memcpy(&sample, wav.data() + offset, 2);
    if (levels.empty() || levels.back() != sample) levels.push_back(sample);
  }
  return levels;
}

inline int16_t LevelOf(char first_byte) {
  return static_cast<int16_t>(
      std::lround(static_cast<unsigned char>(first_byte) / 256.0f * 32767.0f));
}

struct ServiceOptions {
  test_support::FakeEngineOptions engine;
  scheduler::SchedulerConfig scheduling;
  int pipeline_depth = 2;
  size_t stream_buffer_bytes = 1 << 20;
  bool load = true;
  bool fail_to_load = false;
  std::map<std::string, VoiceAlias> extra_aliases;  // besides "narrator" → bob
  store::VoiceStoreConfig voices;                   // cloned voices: off unless dir is set
  text::InputLimits limits;                         // ServiceConfig::limits
  int max_audio_seconds = 900;                      // ServiceConfig's
  int max_stream_audio_seconds = 3600;
  ResponseCacheConfig cache;                  // ServiceConfig::cache
  std::string engine_name = "fake";           // the model's engine (the factory ignores it)
  bool normalize_text = true;                 // ServiceConfig's default
  store::DictionaryStoreConfig dictionaries;  // off unless dir is set
  std::vector<std::string> lexicons;          // the model's lexicon files
};

class ServiceTest : public ::testing::Test {
 protected:
  void Start(ServiceOptions options = {}) {
    ServiceConfig config;
    ModelConfig model;
    model.engine.model_id = "fake";
    model.engine.engine = options.engine_name;
    model.scheduling = options.scheduling;
    model.lexicons = options.lexicons;
    config.models.push_back(model);
    config.pipeline_depth = options.pipeline_depth;
    config.stream_buffer_bytes = options.stream_buffer_bytes;
    config.voice_aliases["narrator"] = {"", "bob"};
    config.voice_aliases.insert(options.extra_aliases.begin(), options.extra_aliases.end());
    config.openai_voices["alloy"] = "alice";
    config.encode_threads = 2;
    config.voices = options.voices;
    config.limits = options.limits;
    config.max_audio_seconds = options.max_audio_seconds;
    config.max_stream_audio_seconds = options.max_stream_audio_seconds;
    config.cache = options.cache;
    config.normalize_text = options.normalize_text;
    config.dictionaries = options.dictionaries;
    options.engine.fill_from_first_byte = true;
    bool fail = options.fail_to_load;
    auto engine_options = options.engine;
    auto service = TtsService::Create(
        config, registry_,
        [this, engine_options,
         fail](const engine::EngineSpec&) -> absl::StatusOr<std::unique_ptr<engine::Engine>> {
          if (fail) return absl::InternalError("fake model file is corrupt");
          auto created = std::make_unique<test_support::FakeEngine>(engine_options);
          engine_ = created.get();
          return std::unique_ptr<engine::Engine>(std::move(created));
        });
    ASSERT_TRUE(service.ok()) << service.status();
    service_ = std::move(*service);
    if (options.load) load_status_ = service_->LoadModels();
  }

  void TearDown() override {
    if (engine_ != nullptr) engine_->OpenGate();
    service_.reset();
  }

  SynthesisRequest Request(std::string text, bool streaming = false) {
    SynthesisRequest request;
    request.model = "fake";
    request.voice = "alice";
    request.text = std::move(text);
    request.format = audio::AudioFormat::kWav;
    request.streaming = streaming;
    return request;
  }

  // Starts a request that is expected to be accepted.
  std::shared_ptr<SynthesisJob> Accept(SynthesisRequest request,
                                       const std::shared_ptr<RecordingSink>& sink) {
    auto job = service_->Synthesize(std::move(request), sink);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : nullptr;
  }

  // Runs an accepted request to its end; the sink says what it heard (a failure included).
  std::shared_ptr<RecordingSink> Run(SynthesisRequest request) {
    auto sink = std::make_shared<RecordingSink>();
    auto job = Accept(std::move(request), sink);
    EXPECT_TRUE(sink->WaitComplete());
    EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));
    return sink;
  }

  // The same for a request that must succeed.
  std::shared_ptr<RecordingSink> RunOk(SynthesisRequest request) {
    auto sink = Run(std::move(request));
    EXPECT_TRUE(sink->status().ok()) << sink->status();
    return sink;
  }

  core::MetricsRegistry registry_;
  std::unique_ptr<TtsService> service_;
  test_support::FakeEngine* engine_ = nullptr;  // owned by the service's model host
  absl::Status load_status_;
};

}  // namespace voxserve::service
