// Read-only routes: voices, models, health and Prometheus metrics.
#pragma once

#include <chrono>
#include <string>

#include "core/metrics.h"
#include "service/tts_service.h"
#include "transport/http/router.h"

namespace voxserve::transport::http {

struct ServerIdentity {
  std::string version;
  std::chrono::steady_clock::time_point started_at = std::chrono::steady_clock::now();
};

// Everything referenced outlives the router's handlers.
void AddInfoRoutes(Router& router, service::TtsService& service,
                   const core::MetricsRegistry& metrics, const ServerIdentity& identity);

}  // namespace voxserve::transport::http
