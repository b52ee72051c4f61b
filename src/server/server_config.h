// Everything voxserve is configured with, and where it comes from: the YAML file (--config),
// VOXSERVE_* environment variables and command-line flags, later ones winning.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "core/options.h"
#include "service/service_config.h"
#include "transport/http/http_config.h"

namespace voxserve::server {

struct ServerConfig {
  transport::http::HttpConfig http;
  service::ServiceConfig service;
  std::string log_level = "info";
  std::string log_format = "text";
  int drain_timeout_ms = 30'000;  // SIGTERM: how long in-flight requests may take to finish
  std::string config_path;        // the YAML file read, if any
};

struct ParsedCommandLine {
  ServerConfig config;
  bool exit_now = false;  // --help or --version: `message` is the whole output
  std::string message;
};

// argv as main() got it. Errors name the source (file key, variable or flag) and the allowed range.
absl::StatusOr<ParsedCommandLine> LoadServerConfig(int argc, const char* const* argv,
                                                   const core::EnvLookup& env);

}  // namespace voxserve::server
