#include "server/models_folder.h"

#include <algorithm>

#include "core/error.h"
#include "engine/onnx/model_discovery.h"

namespace voxserve::server {

absl::Status AddModelsFromFolder(ServerConfig& config) {
  if (config.models_dir.empty()) return absl::OkStatus();
  auto found = engine::onnx::DiscoverModels(config.models_dir);
  if (!found.ok()) {
    return core::InvalidArgument("models_dir: " + std::string(found.status().message()));
  }
  std::vector<service::ModelConfig>& models = config.service.models;
  for (engine::EngineSpec& spec : found->models) {
    bool configured = std::any_of(models.begin(), models.end(), [&](const auto& model) {
      return model.engine.model_id == spec.model_id;
    });
    if (configured) {
      config.startup_warnings.push_back("models_dir: " + spec.options["model"] +
                                        " not loaded: the configuration already has a model '" +
                                        spec.model_id + "'");
      continue;
    }
    service::ModelConfig model;
    model.engine = std::move(spec);
    models.push_back(std::move(model));
  }
  for (const std::string& note : found->notes) {
    config.startup_warnings.push_back("models_dir: " + note);
  }
  return absl::OkStatus();
}

}  // namespace voxserve::server
