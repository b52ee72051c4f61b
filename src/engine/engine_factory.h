// Builds an engine from its configured name: the one place that knows every backend.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace voxserve::engine {

struct EngineSpec {
  std::string model_id;       // the id clients use, e.g. "espeak"
  std::string engine;         // backend: "espeak"
  std::string default_voice;  // empty = the backend's default
  std::map<std::string, std::string> options;  // backend-specific, e.g. espeak "data_path"
};

// Errors name what is allowed, not the model: the caller adds "model <id>: " (LoadModels).
absl::StatusOr<std::unique_ptr<Engine>> CreateEngine(const EngineSpec& spec);

// The engine name and options, read as CreateEngine reads them but with nothing loaded: an
// unknown engine or option (or a value out of its range) is found when the config is checked,
// before the server serves, not when the model loads. Errors as CreateEngine's.
absl::Status CheckEngineSpec(const EngineSpec& spec);

// Whether `engine` runs ONNX Runtime sessions and so takes their options (intra_op_threads,
// cuda_device_id, ...): piper, kokoro and cosyvoice; espeak and tone refuse them. Inline: the
// scheduler, which links only the engine contracts, asks it when it places worker processes.
inline bool RunsOnnxSessions(std::string_view engine) {
  return engine == "piper" || engine == "kokoro" || engine == "cosyvoice";
}

// How the service builds engines; CreateEngine in production, a test double in tests.
using EngineFactory = std::function<absl::StatusOr<std::unique_ptr<Engine>>(const EngineSpec&)>;

}  // namespace voxserve::engine
