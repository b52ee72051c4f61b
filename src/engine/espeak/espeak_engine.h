// espeak-ng as an engine: formant synthesis, every installed language, no model files. The
// embedded default, so voxserve speaks out of the box.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "engine/espeak/espeak_library.h"
#include "engine/espeak/espeak_synth_process.h"

namespace voxserve::engine {

struct EspeakConfig {
  std::string model_id = "espeak";
  std::string data_path;  // espeak-ng-data folder; empty = the library's built-in default
  std::string default_voice = "en-us";
  // A synthesis still running after this is ended with DeadlineExceeded (its speaker killed).
  std::chrono::milliseconds synthesis_timeout{30'000};
};

// libespeak-ng keeps one global synthesizer per process, and state that carries from one
// synthesis to the next: this process's library (EspeakLibrary, shared with the espeak
// phonemizer of the ONNX voices) only lists voices, and each synthesis runs in a speaker process
// that puts the library's state back to its voice's checkpoint first (espeak_synth_process.h),
// so the same request always gives the same samples, as the espeak-ng command line does. Calls
// from several threads run at once, each on its own speakers (one core each): the scheduler's
// in-process instances are the parallelism, with no worker process between a request and its
// speaker. Only one EspeakEngine may exist at a time. Safe cross thread.
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
  EspeakEngine(ModelInfo info, std::vector<std::string> variants,
               std::unordered_map<std::string, std::string> voice_files, EspeakLibrary* library,
               std::unique_ptr<EspeakSynthProcess> synth);
  absl::StatusOr<audio::PcmAudio> SynthesizeOne(const SegmentInput& input);

  const ModelInfo info_;
  const std::vector<std::string> variants_;  // e.g. "f3", "m1", "klatt": as "<voice>+<variant>"
  // voice id → the name espeak_SetVoiceByName understands (its voice file identifier).
  const std::unordered_map<std::string, std::string> voice_files_;
  EspeakLibrary* const library_;  // process-wide; never destroyed
  const std::unique_ptr<EspeakSynthProcess> synth_;
};

}  // namespace voxserve::engine
