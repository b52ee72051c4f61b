// voxserve: see README.md. Configuration: voxserve --help, docs/configuration.md.
// Exit codes: 0 after SIGTERM/SIGINT and the drain (also when a model was still loading at the
// drain deadline: that load is abandoned, see server_app.cc), 1 a listener could not start,
// 2 invalid configuration.
#include <cstdio>

#include "core/logging.h"
#include "server/config_reference.h"
#include "server/model_commands.h"
#include "server/pull_command.h"
#include "server/server_app.h"
#include "server/server_config.h"
#include "server/startup_checks.h"
#include "server/voice_commands.h"
#include "server/worker_mode.h"

int main(int argc, char** argv) {
  // The server starts its engine workers as this same binary (scheduling.isolation: process).
  if (voxserve::server::IsWorkerCommandLine(argc, argv)) {
    return voxserve::server::RunWorker(argc, argv);
  }
  // Offline model tools: voxserve check-model DIR, voxserve verify-bundle DIR.
  if (voxserve::server::IsModelCommandLine(argc, argv)) {
    return voxserve::server::RunModelCommand(argc, argv);
  }
  // voxserve models pull REPO: a model from the Hugging Face hub.
  if (voxserve::server::IsPullCommandLine(argc, argv)) {
    return voxserve::server::RunPullCommand(argc, argv);
  }
  // voxserve voices import|export: between a voices directory and PostgreSQL.
  if (voxserve::server::IsVoiceCommandLine(argc, argv)) {
    return voxserve::server::RunVoiceCommand(argc, argv);
  }
  // voxserve config-reference: docs/configuration.md, from the schema.
  if (voxserve::server::IsConfigReferenceCommandLine(argc, argv)) {
    return voxserve::server::RunConfigReference(argc, argv);
  }
  auto parsed =
      voxserve::server::LoadServerConfig(argc, argv, voxserve::core::ProcessEnvironment());
  if (!parsed.ok()) {
    std::fprintf(stderr, "voxserve: %s\n", std::string(parsed.status().message()).c_str());
    return 2;
  }
  if (parsed->exit_now) {
    std::fputs(parsed->message.c_str(), stdout);
    return 0;
  }
  const auto& config = parsed->config;
  if (auto status = voxserve::server::CheckModelsCanStart(config); !status.ok()) {
    std::fprintf(stderr, "voxserve: %s\n", std::string(status.message()).c_str());
    return 2;
  }
  if (auto status = voxserve::core::ConfigureLogging(config.log_level, config.log_format);
      !status.ok()) {
    std::fprintf(stderr, "voxserve: %s\n", std::string(status.message()).c_str());
    return 2;
  }
  return voxserve::server::RunServer(config);
}
