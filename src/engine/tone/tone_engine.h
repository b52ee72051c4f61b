// The tone engine: a diagnostic streaming engine for testing the streaming plumbing (scheduler
// step loop, worker frames, every transport) and for load tests without a model, in the manner of
// Triton's identity/repeat test backends. Per active segment it emits one chunk of sine tone per
// step, one chunk per word of the text, so a sentence of N words streams N chunks. Configured as
// `engine: tone` (docs/engines.md); it is not a voice anyone should listen to.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/streaming_engine.h"

namespace voxserve::engine {

// A word that makes the tone engine end its segment with an Internal error at that word's step
// (after the chunks of the words before it): exercises the error end of a stream.
inline constexpr std::string_view kToneFailWord = "TONE_FAIL";

struct ToneConfig {
  std::string model_id = "tone";
  std::string default_voice = "a4";
  int sample_rate = 16000;  // options.sample_rate, 8000..48000
  int chunk_ms = 200;       // options.chunk_ms: audio per chunk (per word) at speed 1, 10..2000
  int step_ms = 20;         // options.step_ms: compute time one step takes (all active), 0..1000
  int max_active = 16;      // options.max_active: sequences one instance advances, 1..1024

  // Sets one `options` key; InvalidArgument naming the key and its range otherwise.
  absl::Status Set(const std::string& key, const std::string& value);
};

// Immutable after Create, so safe cross thread; each runner keeps its own sequences.
class ToneEngine : public StreamingEngine {
 public:
  static absl::StatusOr<std::unique_ptr<ToneEngine>> Create(const ToneConfig& config);

  const ModelInfo& info() const override { return info_; }
  bool AcceptsVoice(std::string_view voice_id) const override;
  absl::Status Warmup(std::span<const std::string> texts) override;
  int max_active() const override { return config_.max_active; }
  absl::StatusOr<std::unique_ptr<StreamRunner>> CreateRunner() override;

  // The tone frequency of a voice (Hz); 0 for a voice the engine does not have.
  static double FrequencyOf(std::string_view voice_id);

 private:
  explicit ToneEngine(const ToneConfig& config);

  const ToneConfig config_;
  ModelInfo info_;
};

}  // namespace voxserve::engine
