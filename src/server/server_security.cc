#include "server/server_security.h"

#include "core/structured_log.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace voxserve::server {

ServerSecurity::ServerSecurity(const ServerConfig& config, core::MetricsRegistry& registry)
    : config_(config),
      reloads_(registry.AddCounter("voxserve_config_reloads_total",
                                   "Reloads on SIGHUP, by what was reloaded (api_keys, tls) and "
                                   "result (ok, error).",
                                   {"what", "result"})),
      certificate_expiry_(registry
                              .AddGauge("voxserve_tls_certificate_expiry_timestamp_seconds",
                                        "When the served certificate expires (Unix time; 0 "
                                        "without TLS).")
                              .WithLabels({})) {}

absl::StatusOr<std::unique_ptr<ServerSecurity>> ServerSecurity::Create(
    const ServerConfig& config, core::MetricsRegistry& registry) {
  std::unique_ptr<ServerSecurity> security(new ServerSecurity(config, registry));
  if (config.tls.enabled()) {
    auto tls = transport::tls::ServerTlsContext::Create(config.tls);
    if (!tls.ok()) return tls.status();
    security->tls_ = std::move(*tls);
    security->certificate_expiry_.Set(security->tls_->not_after_seconds());
  }
  auto authenticator = transport::auth::Authenticator::Create(config.auth, registry);
  if (!authenticator.ok()) return authenticator.status();
  security->authenticator_ = std::move(*authenticator);
  return security;
}

void ServerSecurity::RecordReload(const char* what, const absl::Status& status) {
  reloads_.WithLabels({what, status.ok() ? "ok" : "error"}).Increment();
  if (status.ok()) {
    core::LogFields(spdlog::level::info, "reloaded", {{"what", what}});
  } else {
    core::LogFields(spdlog::level::err, "reload failed; keeping the previous settings",
                    {{"what", what}, {"error", std::string(status.message())}});
  }
}

void ServerSecurity::Reload() {
  if (authenticator_->enabled()) {
    absl::Status status = authenticator_->Reload();
    RecordReload("api_keys", status);
    if (status.ok()) {
      core::LogFields(spdlog::level::info, "api keys",
                      {{"keys", authenticator_->key_count()}, {"file", config_.auth.keys_file}});
    }
  }
  if (tls_) {
    absl::Status status = tls_->Reload();
    RecordReload("tls", status);
    if (status.ok()) certificate_expiry_.Set(tls_->not_after_seconds());
  }
}

void ServerSecurity::LogStartup() const {
  nlohmann::json fields = {
      {"tls", tls_ != nullptr},
      {"client_auth", std::string(transport::tls::ClientAuthName(config_.tls.client_auth))},
      {"auth", authenticator_->enabled()},
      {"api_keys", authenticator_->key_count()},
      {"protect_health", config_.auth.protect_health},
      {"protect_metrics", config_.auth.protect_metrics}};
  core::LogFields(spdlog::level::info, "security", fields);
  if (!authenticator_->enabled()) {
    spdlog::warn(
        "AUTHENTICATION IS OFF: no auth.keys_file is configured, so every client may call every "
        "route. Set auth.keys_file (--api-keys-file) before exposing this server.");
  }
}

}  // namespace voxserve::server
