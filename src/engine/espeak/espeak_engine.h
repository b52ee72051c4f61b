// espeak-ng as an engine: formant synthesis, every installed language, no model files. The
// embedded default, so voxserve speaks out of the box.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "engine/espeak/espeak_library.h"

namespace voxserve::engine {

struct EspeakConfig {
  std::string model_id = "espeak";
  std::string data_path;  // espeak-ng-data folder; empty = the library's built-in default
  std::string default_voice = "en-us";
};

// libespeak-ng keeps one global synthesizer per process (voice, rate and the output callback are
// globals), so every call into it holds the process-wide lock of EspeakLibrary (shared with the
// espeak phonemizer of the ONNX voices): calls are serialized whatever the number of scheduler
// instances, and only one EspeakEngine may exist at a time.
class EspeakEngine final : public Engine {
 public:
  static absl::StatusOr<std::unique_ptr<EspeakEngine>> Create(const EspeakConfig& config);
  ~EspeakEngine() override;

  const ModelInfo& info() const override { return info_; }
  bool AcceptsVoice(std::string_view voice_id) const override;
  absl::Status Warmup(std::span<const std::string> texts) override;
  std::vector<absl::StatusOr<audio::PcmAudio>> Synthesize(
      std::span<const SegmentInput> batch) override;

 private:
  EspeakEngine(ModelInfo info, std::vector<std::string> variants, EspeakLibrary* library);
  absl::StatusOr<audio::PcmAudio> SynthesizeOne(const SegmentInput& input);

  ModelInfo info_;
  std::vector<std::string> variants_;  // e.g. "f3", "m1", "klatt": usable as "<voice>+<variant>"
  EspeakLibrary* library_;             // process-wide; never destroyed
};

}  // namespace voxserve::engine
