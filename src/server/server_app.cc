#include "server/server_app.h"

#include <csignal>
#include <pthread.h>
#include <thread>

#include "core/metrics.h"
#include "service/tts_service.h"
#include "spdlog/spdlog.h"
#include "transport/http/http_server.h"
#include "transport/http/info_handlers.h"
#include "transport/http/speech_handlers.h"

namespace voxserve::server {
namespace {

// Signals are taken synchronously by the main thread (sigwait), so they are blocked here before
// any other thread starts and every thread inherits the mask.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

}  // namespace

int RunServer(const ServerConfig& config) {
  sigset_t signals = BlockShutdownSignals();
  std::signal(SIGPIPE, SIG_IGN);  // a client that vanished mid-write is an error code, not death

  core::MetricsRegistry metrics;
  auto service = service::TtsService::Create(config.service, metrics);
  if (!service.ok()) {
    spdlog::critical("invalid configuration: {}", std::string(service.status().message()));
    return 2;
  }
  transport::http::HttpMetrics http_metrics(metrics);
  transport::http::Router router;
  transport::http::ServerIdentity identity{VOXSERVE_VERSION};
  transport::http::AddSpeechRoutes(router, **service);
  transport::http::AddInfoRoutes(router, **service, metrics, identity);
  auto server = transport::http::HttpServer::Create(config.http, router, http_metrics);
  if (!server.ok()) {
    spdlog::critical("{}", std::string(server.status().message()));
    return 1;
  }
  (*server)->Start();
  spdlog::info("voxserve {} listening on http://{}:{}", VOXSERVE_VERSION, config.http.host,
               (*server)->port());

  // Live now; ready once every model has loaded and warmed up.
  std::thread loader([&service] {
    if (absl::Status status = (*service)->LoadModels(); !status.ok()) {
      spdlog::error("not ready: {}", std::string(status.message()));
    } else {
      spdlog::info("ready");
    }
  });

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("received {}, draining (up to {} ms)", strsignal(signal_number),
               config.drain_timeout_ms);
  (*service)->BeginDrain();
  (*server)->StopAccepting();
  bool idle = (*service)->WaitIdle(std::chrono::milliseconds(config.drain_timeout_ms));
  if (!idle) {
    spdlog::warn("drain timeout passed with {} request(s) in flight", (*service)->InFlight());
  }
  loader.join();
  (*server)->Stop();
  service->reset();  // stops schedulers; unfinished requests end with Unavailable
  spdlog::info("stopped");
  return 0;
}

}  // namespace voxserve::server
