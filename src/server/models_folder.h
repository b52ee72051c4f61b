// --models DIR: every Piper voice and Kokoro model found in the folder becomes a model.
#pragma once

#include "absl/status/status.h"
#include "server/server_config.h"

namespace voxserve::server {

// Adds the models found in config.models_dir (nothing when it is empty) to config.service.models
// with default scheduling, after the configured ones; a configured model with the same id wins.
// Files that look like models but are not taken become config.startup_warnings. Fails when the
// folder does not exist.
absl::Status AddModelsFromFolder(ServerConfig& config);

}  // namespace voxserve::server
