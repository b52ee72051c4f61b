#include "engine/engine_factory.h"

#include "core/error.h"
#include "engine/espeak/espeak_engine.h"
#include "engine/tone/tone_engine.h"
#if VOXSERVE_ONNX
#include "engine/cosyvoice/cosyvoice_engine.h"
#include "engine/onnx/kokoro_voice.h"
#include "engine/onnx/piper_voice.h"
#endif

namespace voxserve::engine {
namespace {

absl::StatusOr<std::unique_ptr<Engine>> CreateEspeak(const EngineSpec& spec) {
  EspeakConfig config;
  config.model_id = spec.model_id;
  if (!spec.default_voice.empty()) config.default_voice = spec.default_voice;
  for (const auto& [key, value] : spec.options) {
    if (key == "data_path") {
      config.data_path = value;
    } else {
      return core::InvalidArgument("unknown espeak option '" + key + "' (allowed: data_path)");
    }
  }
  auto engine = EspeakEngine::Create(config);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Engine>(std::move(*engine));
}

// The diagnostic streaming engine (engine/tone/tone_engine.h).
absl::StatusOr<std::unique_ptr<Engine>> CreateTone(const EngineSpec& spec) {
  ToneConfig config;
  config.model_id = spec.model_id;
  if (!spec.default_voice.empty()) config.default_voice = spec.default_voice;
  for (const auto& [key, value] : spec.options) {
    if (absl::Status status = config.Set(key, value); !status.ok()) return status;
  }
  auto engine = ToneEngine::Create(config);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Engine>(std::move(*engine));
}

#if VOXSERVE_ONNX
// Piper and Kokoro configs read their own option keys (engine/onnx/*_voice.h).
template <typename Voice, typename Config>
absl::StatusOr<std::unique_ptr<Engine>> CreateOnnxVoice(const EngineSpec& spec) {
  Config config;
  config.model_id = spec.model_id;
  config.default_voice = spec.default_voice;
  for (const auto& [key, value] : spec.options) {
    if (absl::Status status = config.Set(key, value); !status.ok()) return status;
  }
  auto engine = Voice::Create(config);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Engine>(std::move(*engine));
}
#endif

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> CreateEngine(const EngineSpec& spec) {
  if (spec.engine == "espeak") return CreateEspeak(spec);
  if (spec.engine == "tone") return CreateTone(spec);
  if (RunsOnnxSessions(spec.engine)) {
#if VOXSERVE_ONNX
    if (spec.engine == "cosyvoice") {
      return CreateOnnxVoice<cosyvoice::CosyVoiceEngine, cosyvoice::CosyVoiceEngineConfig>(spec);
    }
    if (spec.engine == "piper") {
      return CreateOnnxVoice<onnx::PiperVoice, onnx::PiperEngineConfig>(spec);
    }
    return CreateOnnxVoice<onnx::KokoroVoice, onnx::KokoroEngineConfig>(spec);
#else
    return core::InvalidArgument("model " + spec.model_id + ": engine '" + spec.engine +
                                 "' needs ONNX Runtime, and this voxserve was built without "
                                 "ONNX Runtime (-DVOXSERVE_ONNX=OFF); only espeak is available");
#endif
  }
  return core::InvalidArgument("unknown engine '" + spec.engine +
                               "' (available: espeak, piper, kokoro, cosyvoice, tone)");
}

}  // namespace voxserve::engine
