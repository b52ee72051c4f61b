// A Piper voice as an engine: text → espeak-ng IPA → ids → VITS graph → PCM. One model file
// (+ its .onnx.json) is one voxserve model; a multi-speaker file lists each speaker as a voice
// "<model>:<speaker>".
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "engine/espeak/espeak_phonemizer.h"
#include "engine/onnx/onnx_session_config.h"
#include "engine/onnx/piper_config.h"
#include "engine/onnx/piper_model.h"

namespace voxserve::engine::onnx {

// YAML models[].options of an `engine: piper` model (also filled in by --models discovery).
struct PiperEngineConfig {
  std::string model_id;
  std::string model_path;        // options.model: the voice's .onnx file (required)
  std::string config_path;       // options.config: default <model>.json, as Piper's tools do
  std::string espeak_data_path;  // options.espeak_data_path: empty = espeak-ng's default
  std::string default_voice;     // empty = the first speaker
  // Silence after each sentence (Piper's --sentence_silence); 0.2 s as in Piper's C++.
  double sentence_silence_seconds = 0.2;
  // Scale each sentence to peak 1.0, as Piper's Python (normalize_audio, its default) does.
  bool normalize_audio = true;
  std::optional<float> noise_scale, length_scale, noise_w;  // override the .onnx.json's
  int max_batch_size = 8;  // options.max_batch_size: used when the graph can batch
  OnnxSessionConfig session;

  // One entry of `options`; errors name the key and list the known keys.
  absl::Status Set(const std::string& key, const std::string& value);
  absl::Status Validate() const;
};

// Immutable after Create. Synthesize may run on several scheduler instances at once: the ONNX
// session is shared (Run is thread-safe), the espeak phonemizer serializes itself.
class PiperVoice final : public Engine {
 public:
  static absl::StatusOr<std::unique_ptr<PiperVoice>> Create(const PiperEngineConfig& config);

  const ModelInfo& info() const override { return info_; }
  bool AcceptsVoice(std::string_view voice_id) const override;
  absl::Status Warmup(std::span<const std::string> texts) override;
  std::vector<absl::StatusOr<audio::PcmAudio>> Synthesize(
      std::span<const SegmentInput> batch) override;

  // The sentences of `text` as id sequences (exposed for tests).
  absl::StatusOr<std::vector<std::vector<int64_t>>> TextToIds(std::string_view text) const;

 private:
  PiperVoice() = default;
  // The sentences of `text` as phoneme strings (what TextToIds turns into ids).
  absl::StatusOr<std::vector<std::u32string>> TextToPhonemes(std::string_view text) const;
  // Synthesizes segments that share one voice and speed.
  std::vector<absl::StatusOr<audio::PcmAudio>> SynthesizeGroup(
      std::span<const SegmentInput* const> group);

  PiperEngineConfig config_;
  PiperVoiceConfig voice_;
  std::unique_ptr<PiperModel> model_;
  std::unique_ptr<EspeakPhonemizer> phonemizer_;             // null for phoneme_type "text"
  std::map<std::string, int64_t, std::less<>> speaker_ids_;  // voice id → sid
  ModelInfo info_;
};

}  // namespace voxserve::engine::onnx
