// Kokoro-82M as an engine: text → espeak-ng IPA → Kokoro tokens → StyleTTS2/iSTFTNet graph →
// 24 kHz PCM. One model file + one voices file is one voxserve model; every voice in the voices
// file is one of its voices (af_heart, bm_george, ...).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "engine/espeak/espeak_phonemizer.h"
#include "engine/onnx/kokoro_model.h"
#include "engine/onnx/kokoro_phonemes.h"
#include "engine/onnx/kokoro_voices.h"
#include "engine/onnx/onnx_session_config.h"

namespace voxserve::engine::onnx {

// YAML models[].options of an `engine: kokoro` model (also filled in by --models discovery).
struct KokoroEngineConfig {
  std::string model_id;
  std::string model_path;   // options.model: kokoro-v1.0.onnx, model.onnx, ... (required)
  std::string voices_path;  // options.voices: voices-v1.0.bin (NPZ) or a voices/ folder
  // options.config: a config.json with "vocab"; only needed when the graph has no
  // kokoro_config metadata. Empty = config.json beside the model, if there is one.
  std::string config_path;
  std::string espeak_data_path;  // options.espeak_data_path
  // options.espeak_voice: phonemize every voice with this espeak voice; empty = by the voice
  // name's language letter (see KokoroEspeakVoice).
  std::string espeak_voice;
  std::string default_voice;  // empty = af_heart if present, else the first voice
  OnnxSessionConfig session;

  absl::Status Set(const std::string& key, const std::string& value);
  absl::Status Validate() const;
};

// Immutable after Create. Synthesize may run on several scheduler instances at once: the ONNX
// session is shared, the espeak phonemizer serializes itself.
class KokoroVoice final : public Engine {
 public:
  static absl::StatusOr<std::unique_ptr<KokoroVoice>> Create(const KokoroEngineConfig& config);

  const ModelInfo& info() const override { return info_; }
  bool AcceptsVoice(std::string_view voice_id) const override;
  absl::Status Warmup(std::span<const std::string> texts) override;
  std::vector<absl::StatusOr<audio::PcmAudio>> Synthesize(
      std::span<const SegmentInput> batch) override;

  // Token chunks of `text` for `voice` (exposed for tests).
  absl::StatusOr<std::vector<std::vector<int64_t>>> TextToTokens(std::string_view text,
                                                                 std::string_view voice) const;

 private:
  KokoroVoice() = default;
  absl::StatusOr<audio::PcmAudio> SynthesizeOne(const SegmentInput& input) const;

  KokoroEngineConfig config_;
  std::unique_ptr<KokoroModel> model_;
  KokoroVoices voices_;
  KokoroVocab vocab_;
  std::map<int64_t, char32_t> symbols_;  // vocab_ inverted: token → phoneme, for word timings
  std::unique_ptr<EspeakPhonemizer> phonemizer_;
  ModelInfo info_;
};

}  // namespace voxserve::engine::onnx
