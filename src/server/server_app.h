// The voxserve process: builds the service and the HTTP listener from the configuration, loads
// models in the background (live at once, ready after warm-up), and drains on SIGTERM.
#pragma once

#include "server/server_config.h"

namespace voxserve::server {

// Runs until SIGTERM or SIGINT, then drains; SIGHUP reloads API keys and certificates. Returns
// the process exit code.
int RunServer(const ServerConfig& config);

}  // namespace voxserve::server
