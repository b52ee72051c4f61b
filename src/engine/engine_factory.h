// Builds an engine from its configured name: the one place that knows every backend.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

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

// How the service builds engines; CreateEngine in production, a test double in tests.
using EngineFactory = std::function<absl::StatusOr<std::unique_ptr<Engine>>(const EngineSpec&)>;

}  // namespace voxserve::engine
