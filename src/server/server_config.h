// Everything voxserve is configured with, and where it comes from: the YAML file (--config),
// VOXSERVE_* environment variables and command-line flags, later ones winning.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/options.h"
#include "core/yaml_schema.h"
#include "service/service_config.h"
#include "transport/auth/auth_config.h"
#include "transport/grpc/grpc_config.h"
#include "transport/http/http_config.h"
#include "transport/tls/tls_config.h"
#include "transport/websocket/websocket_config.h"
#include "transport/wyoming/wyoming_config.h"

namespace voxserve::server {

struct ServerConfig {
  transport::http::HttpConfig http;
  transport::grpc::GrpcConfig grpc;
  transport::websocket::WebSocketConfig websocket;
  transport::wyoming::WyomingConfig wyoming;
  service::ServiceConfig service;
  transport::tls::TlsConfig tls;
  transport::auth::AuthConfig auth;
  std::string log_level = "info";
  std::string log_format = "text";
  int drain_timeout_ms = 30'000;  // SIGTERM: how long in-flight requests may take to finish
  std::string config_path;        // the YAML file read, if any
  bool fault_injection = false;   // TEST ONLY: transport/http/fault_injection.h
  // Scanned for Piper voices and Kokoro models (--models); each becomes a model beside the
  // configured ones (a configured model of the same id wins). See server/models_folder.h.
  std::string models_dir;
  std::vector<std::string> startup_warnings;  // logged once logging is set up
};

struct ParsedCommandLine {
  ServerConfig config;
  bool exit_now = false;  // --help or --version: `message` is the whole output
  std::string message;
};

// The config file's schema, every key documented (core::KeyDoc): what the file is checked against
// and what `voxserve config-reference` renders as docs/configuration.md.
core::YamlSchema DocumentedConfigSchema();

// argv as main() got it. Errors name the source (file key, variable or flag) and the allowed range.
absl::StatusOr<ParsedCommandLine> LoadServerConfig(int argc, const char* const* argv,
                                                   const core::EnvLookup& env);

}  // namespace voxserve::server
