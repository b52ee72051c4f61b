#include "engine/engine_factory.h"

#include "core/error.h"
#include "core/options.h"
#include "engine/espeak/espeak_engine.h"
#include "engine/tone/tone_engine.h"
#if VOXSERVE_ONNX
#include "engine/cosyvoice/cosyvoice_engine.h"
#include "engine/onnx/kokoro_voice.h"
#include "engine/onnx/piper_voice.h"
#endif

namespace voxserve::engine {
namespace {

absl::StatusOr<EspeakConfig> EspeakConfigFor(const EngineSpec& spec) {
  EspeakConfig config;
  config.model_id = spec.model_id;
  if (!spec.default_voice.empty()) config.default_voice = spec.default_voice;
  for (const auto& [key, value] : spec.options) {
    if (key == "data_path") {
      config.data_path = value;
    } else if (key == "synthesis_timeout_ms") {
      long long ms = 0;
      if (absl::Status parsed = core::ParseInt(value, 100, 3'600'000, &ms); !parsed.ok()) {
        return core::InvalidArgument("espeak option synthesis_timeout_ms: " +
                                     std::string(parsed.message()));
      }
      config.synthesis_timeout = std::chrono::milliseconds(ms);
    } else {
      return core::InvalidArgument("unknown espeak option '" + key +
                                   "' (allowed: data_path, synthesis_timeout_ms)");
    }
  }
  return config;
}

// The tone engine, Piper, Kokoro and CosyVoice configs read their own option keys (their Set).
template <typename Config>
absl::StatusOr<Config> ConfigFor(const EngineSpec& spec) {
  Config config;
  config.model_id = spec.model_id;
  if (!spec.default_voice.empty()) config.default_voice = spec.default_voice;
  for (const auto& [key, value] : spec.options) {
    if (absl::Status status = config.Set(key, value); !status.ok()) return status;
  }
  return config;
}

// The engine from its config; with `build` false only the config is checked (null engine).
template <typename Concrete, typename Config>
absl::StatusOr<std::unique_ptr<Engine>> BuildIf(bool build, absl::StatusOr<Config> config) {
  if (!config.ok()) return config.status();
  if (!build) return std::unique_ptr<Engine>();
  auto engine = Concrete::Create(*config);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Engine>(std::move(*engine));
}

absl::StatusOr<std::unique_ptr<Engine>> ReadOrCreate(const EngineSpec& spec, bool build) {
  if (spec.engine == "espeak") return BuildIf<EspeakEngine>(build, EspeakConfigFor(spec));
  if (spec.engine == "tone") return BuildIf<ToneEngine>(build, ConfigFor<ToneConfig>(spec));
  if (RunsOnnxSessions(spec.engine)) {
#if VOXSERVE_ONNX
    if (spec.engine == "cosyvoice") {
      return BuildIf<cosyvoice::CosyVoiceEngine>(build,
                                                 ConfigFor<cosyvoice::CosyVoiceEngineConfig>(spec));
    }
    if (spec.engine == "piper") {
      return BuildIf<onnx::PiperVoice>(build, ConfigFor<onnx::PiperEngineConfig>(spec));
    }
    return BuildIf<onnx::KokoroVoice>(build, ConfigFor<onnx::KokoroEngineConfig>(spec));
#else
    return core::InvalidArgument("model " + spec.model_id + ": engine '" + spec.engine +
                                 "' needs ONNX Runtime, and this voxserve was built without "
                                 "ONNX Runtime (-DVOXSERVE_ONNX=OFF); only espeak is available");
#endif
  }
  return core::InvalidArgument("unknown engine '" + spec.engine +
                               "' (available: espeak, piper, kokoro, cosyvoice, tone)");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> CreateEngine(const EngineSpec& spec) {
  return ReadOrCreate(spec, true);
}

absl::Status CheckEngineSpec(const EngineSpec& spec) { return ReadOrCreate(spec, false).status(); }

}  // namespace voxserve::engine
