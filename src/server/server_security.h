// The process's TLS context and API keys, built from the configuration and reloaded on SIGHUP.
// Every listener (HTTP now; gRPC and WebSocket later) is handed the same two objects.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "core/metrics.h"
#include "server/server_config.h"
#include "transport/auth/authenticator.h"
#include "transport/tls/server_tls_context.h"

namespace voxserve::server {

// Created and reloaded on the main thread; the objects it hands out are safe cross thread.
class ServerSecurity {
 public:
  // Fails when a certificate, key, CA or the keys file cannot be used. The registry must outlive
  // this object.
  static absl::StatusOr<std::unique_ptr<ServerSecurity>> Create(const ServerConfig& config,
                                                                core::MetricsRegistry& registry);

  const transport::tls::ServerTlsContext* tls() const { return tls_.get(); }  // null: plain
  const transport::auth::Authenticator* authenticator() const { return authenticator_.get(); }

  // Re-reads the keys file and the certificate files. Each part whose files are bad keeps what it
  // had; the outcome is logged and counted (voxserve_config_reloads_total).
  void Reload();

  // Startup lines: what is protected how; a loud warning when auth is off.
  void LogStartup() const;

 private:
  ServerSecurity(const ServerConfig& config, core::MetricsRegistry& registry);
  void RecordReload(const char* what, const absl::Status& status);

  const ServerConfig& config_;
  std::unique_ptr<transport::tls::ServerTlsContext> tls_;
  std::unique_ptr<transport::auth::Authenticator> authenticator_;
  core::Family<core::Counter>& reloads_;  // labels: what, result
  core::Gauge& certificate_expiry_;
};

}  // namespace voxserve::server
