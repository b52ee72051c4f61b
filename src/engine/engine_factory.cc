#include "engine/engine_factory.h"

#include "core/error.h"
#include "engine/espeak/espeak_engine.h"

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
      return core::InvalidArgument("model " + spec.model_id + ": unknown espeak option '" + key +
                                   "' (allowed: data_path)");
    }
  }
  auto engine = EspeakEngine::Create(config);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Engine>(std::move(*engine));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> CreateEngine(const EngineSpec& spec) {
  if (spec.engine == "espeak") return CreateEspeak(spec);
  return core::InvalidArgument("model " + spec.model_id + ": unknown engine '" + spec.engine +
                               "' (available: espeak)");
}

}  // namespace voxserve::engine
