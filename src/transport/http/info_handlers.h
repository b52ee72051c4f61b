// Read-only routes: voices, models (API: need a key when auth is on), health and Prometheus
// metrics (open unless auth.protect_health / auth.protect_metrics).
#pragma once

#include <chrono>
#include <string>

#include "core/gpu_monitor.h"
#include "core/metrics.h"
#include "service/tts_service.h"
#include "transport/http/router.h"

namespace voxserve::transport::http {

struct ServerIdentity {
  std::string version;
  std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();
  const core::GpuMonitor* gpus = nullptr;  // null: no GPU or no driver; /health omits "gpus"
};

// Everything referenced outlives the router's handlers.
void AddInfoRoutes(Router& router, service::TtsService& service,
                   const core::MetricsRegistry& metrics, const ServerIdentity& identity);

}  // namespace voxserve::transport::http
