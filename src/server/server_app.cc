#include "server/server_app.h"

#include <pthread.h>

#include <csignal>
#include <cstdlib>
#include <future>
#include <thread>

#include "core/gpu_monitor.h"
#include "core/metrics.h"
#include "core/process_metrics.h"
#include "core/structured_log.h"
#include "nlohmann/json.hpp"
#include "server/grpc_security.h"
#include "server/open_file_limit.h"
#include "server/server_security.h"
#include "service/tts_service.h"
#include "spdlog/spdlog.h"
#include "transport/elevenlabs/elevenlabs_api.h"
#include "transport/elevenlabs/input_stream.h"
#include "transport/grpc/grpc_server.h"
#include "transport/http/dictionary_handlers.h"
#include "transport/http/fault_injection.h"
#include "transport/http/http_server.h"
#include "transport/http/info_handlers.h"
#include "transport/http/playground_routes.h"
#include "transport/http/speech_handlers.h"
#include "transport/http/token_handlers.h"
#include "transport/http/voice_handlers.h"
#include "transport/websocket/websocket_endpoint.h"
#include "transport/wyoming/wyoming_server.h"
#include "transport/wyoming/zeroconf_announcer.h"

namespace voxserve::server {
namespace {

// Signals are taken synchronously by the main thread (sigwait), so they are blocked here before
// any other thread starts and every thread inherits the mask.
sigset_t BlockShutdownSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // reload API keys and certificates
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Home Assistant's discovery of the Wyoming listener, where it is wanted and reachable. A
// failure is logged, not fatal: discovery is a convenience, and Home Assistant can still be
// pointed at the host and port by hand.
std::unique_ptr<transport::wyoming::ZeroconfAnnouncer> AnnounceWyoming(
    const transport::wyoming::WyomingConfig& config, const std::string& host, int port) {
  if (!config.zeroconf) return nullptr;
  if (!transport::wyoming::ReachableFromTheNetwork(host)) {
    spdlog::info("zeroconf: not announcing Wyoming, which listens on {} only (wyoming.host)", host);
    return nullptr;
  }
  auto announcer = transport::wyoming::ZeroconfAnnouncer::Create(config.zeroconf_name, port);
  if (!announcer.ok()) {
    spdlog::warn("{}; Home Assistant will not discover Wyoming (add it by host and port {})",
                 std::string(announcer.status().message()), port);
    return nullptr;
  }
  return *std::move(announcer);
}

}  // namespace

int RunServer(const ServerConfig& config) {
  sigset_t signals = BlockShutdownSignals();
  std::signal(SIGPIPE, SIG_IGN);  // a client that vanished mid-write is an error code, not death

  for (const std::string& warning : config.startup_warnings) spdlog::warn("{}", warning);
  core::MetricsRegistry metrics;
  core::AddProcessMetrics(metrics, VOXSERVE_VERSION);
  std::unique_ptr<core::GpuMonitor> gpus = core::GpuMonitor::Open();  // null without a GPU
  if (gpus) gpus->AddMetrics(metrics);
  auto security = ServerSecurity::Create(config, metrics);
  if (!security.ok()) {
    spdlog::critical("invalid configuration: {}", std::string(security.status().message()));
    return 2;
  }
  auto service = service::TtsService::Create(config.service, metrics);
  if (!service.ok()) {
    spdlog::critical("invalid configuration: {}", std::string(service.status().message()));
    return 2;
  }
  // Thousands of connections need thousands of descriptors: take what the hard limit allows and
  // size max_connections to it before anything opens a socket.
  transport::http::HttpConfig http_config = config.http;
  auto file_limit = RaiseOpenFileLimit();
  if (!file_limit.ok()) {
    spdlog::critical("{}", std::string(file_limit.status().message()));
    return 1;
  }
  core::LogFields(spdlog::level::info, "open file limit",
                  {{"soft_before", file_limit->soft_before},
                   {"soft", file_limit->soft},
                   {"hard", file_limit->hard}});
  auto budget = FitConnectionsToFileLimit(http_config.max_connections, file_limit->soft);
  if (!budget.ok()) {
    spdlog::critical("invalid configuration: {}", std::string(budget.status().message()));
    return 2;
  }
  if (!budget->warning.empty()) spdlog::warn("{}", budget->warning);
  http_config.max_connections = budget->max_connections;
  transport::http::HttpMetrics http_metrics(metrics);
  transport::http::Router router;
  transport::http::ServerIdentity identity{VOXSERVE_VERSION};
  identity.gpus = gpus.get();
  transport::http::AddSpeechRoutes(router, **service, (*security)->authenticator());
  transport::http::AddInfoRoutes(router, **service, metrics, identity);
  transport::http::AddVoiceRoutes(router, **service);
  transport::http::AddTokenRoutes(router, *(*security)->authenticator());
  transport::http::AddDictionaryRoutes(router, **service, "", nullptr);
  // Outlives the HTTP server declared below, which ends the requests its thread serves.
  transport::elevenlabs::ElevenLabsApi elevenlabs(**service, (*security)->authenticator());
  elevenlabs.AddRoutes(router);
  if (config.http.playground) {
    transport::http::AddPlaygroundRoutes(router, transport::http::PlaygroundFiles());
  }
  // Declared before the server, which hands it upgraded connections: it outlives them all.
  transport::websocket::WebSocketEndpoint websocket(config.websocket, http_config, **service,
                                                    metrics, http_metrics);
  transport::websocket::AddSpeechStreamRoute(router);
  // ElevenLabs' stream-input / multi-stream-input; their non-upgrade GETs meet AddRoutes' 404.
  websocket.AddProtocol(transport::elevenlabs::InputStreamRoute((*security)->authenticator()));
  std::unique_ptr<transport::http::FaultInjector> faults;  // TEST ONLY; off by default
  if (config.fault_injection) {
    faults = std::make_unique<transport::http::FaultInjector>();
    faults->Install(router);
  }
  auto server = transport::http::HttpServer::Create(
      http_config, router, http_metrics, {(*security)->tls(), (*security)->authenticator()},
      &websocket);
  if (!server.ok()) {
    spdlog::critical("{}", std::string(server.status().message()));
    return 1;
  }
  (*server)->Start();
  spdlog::info("voxserve {} listening on {}://{}:{}", VOXSERVE_VERSION,
               config.tls.enabled() ? "https" : "http", config.http.host, (*server)->port());
  core::LogFields(spdlog::level::info, "config",
                  {{"config_file", config.config_path},
                   {"models", config.service.models.size()},
                   {"max_connections", http_config.max_connections},
                   {"max_body_bytes", config.http.max_body_bytes},
                   {"header_timeout_ms", config.http.header_timeout_ms},
                   {"idle_timeout_ms", config.http.idle_timeout_ms},
                   {"log_level", config.log_level},
                   {"gpus", gpus ? gpus->Read().size() : 0}});
  (*security)->LogStartup();

  // gRPC after HTTP (tests find HTTP's port first); it shares the service, keys, limits, TLS
  // files and metrics.
  std::unique_ptr<transport::grpc::GrpcServer> grpc_server;
  if (config.grpc.enabled) {
    auto options = GrpcSecurityOptions(config.tls, **security);
    if (!options.ok()) {
      spdlog::critical("{}", std::string(options.status().message()));
      return 1;
    }
    auto created = transport::grpc::GrpcServer::Create(config.grpc, config.http.host, **service,
                                                       metrics, *std::move(options));
    if (!created.ok()) {
      spdlog::critical("{}", std::string(created.status().message()));
      return 1;
    }
    grpc_server = *std::move(created);
    spdlog::info("gRPC listening on {}", grpc_server->address());
  }

  // Wyoming after gRPC (tests find the others' ports first). No keys or TLS: the protocol has
  // neither (docs/wyoming.md says how it is protected).
  std::unique_ptr<transport::wyoming::WyomingServer> wyoming_server;
  std::unique_ptr<transport::wyoming::ZeroconfAnnouncer> zeroconf;
  if (config.wyoming.enabled) {
    transport::wyoming::WyomingServerOptions options;
    options.host = config.wyoming.host.empty() ? config.http.host : config.wyoming.host;
    options.version = VOXSERVE_VERSION;
    options.write_timeout_ms = config.http.write_timeout_ms;
    auto created =
        transport::wyoming::WyomingServer::Create(config.wyoming, options, **service, metrics);
    if (!created.ok()) {
      spdlog::critical("{}", std::string(created.status().message()));
      return 1;
    }
    wyoming_server = *std::move(created);
    wyoming_server->Start();
    spdlog::info("Wyoming listening on {}", wyoming_server->address());
    zeroconf = AnnounceWyoming(config.wyoming, options.host, wyoming_server->port());
  }

  // Live now; ready once every model has loaded and warmed up. `loaded` is set when the loader
  // is done, so a drain can wait for it with a deadline rather than join it blindly.
  std::promise<void> load_finished;
  std::future<void> loaded = load_finished.get_future();
  std::thread loader([&service, done = std::move(load_finished)]() mutable {
    if (absl::Status status = (*service)->LoadModels(); !status.ok()) {
      spdlog::error("not ready: {}", std::string(status.message()));
    } else {
      spdlog::info("ready");
    }
    done.set_value();
  });

  int signal_number = 0;
  while (sigwait(&signals, &signal_number) == 0 && signal_number == SIGHUP) {
    spdlog::info("received SIGHUP, reloading API keys and certificates");
    (*security)->Reload();
  }
  spdlog::info("received {}, draining (up to {} ms)", strsignal(signal_number),
               config.drain_timeout_ms);
  const auto drain_deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(config.drain_timeout_ms);
  (*service)->BeginDrain();
  (*server)->StopAccepting();
  // gRPC refuses new connections now, as HTTP does, and keeps answering on the open ones until
  // they are idle: its own shutdown comes last because it cancels any call arriving after it.
  if (grpc_server) grpc_server->StopAccepting();
  // Wyoming connections finish what they are doing (a stream its running sentence), then close.
  zeroconf.reset();  // withdrawn first: Home Assistant stops being told to come here
  if (wyoming_server) wyoming_server->StopAccepting();
  bool idle = (*service)->WaitIdle(std::chrono::milliseconds(config.drain_timeout_ms));
  if (!idle) {
    spdlog::warn("drain timeout passed with {} request(s) in flight", (*service)->InFlight());
  }
  // WebSockets close (1001) once their running sentence is done; their close handshakes get
  // what is left of the drain time.
  if (!(*server)->WaitWebSocketsClosed(std::max(
          std::chrono::duration_cast<std::chrono::milliseconds>(drain_deadline -
                                                                std::chrono::steady_clock::now()),
          std::chrono::milliseconds(0)))) {
    spdlog::warn("drain timeout passed with WebSocket connections open");
  }
  if (wyoming_server &&
      !wyoming_server->WaitClosed(std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               drain_deadline - std::chrono::steady_clock::now()),
                                           std::chrono::milliseconds(0)))) {
    spdlog::warn("drain timeout passed with Wyoming connections open");
  }
  // A request the service has finished may still have its last bytes queued on its connection
  // (Stop closes every connection): wait for them too, within the drain time.
  if (!(*server)->WaitResponsesWritten(std::max(
          std::chrono::duration_cast<std::chrono::milliseconds>(drain_deadline -
                                                                std::chrono::steady_clock::now()),
          std::chrono::milliseconds(0)))) {
    spdlog::warn("drain timeout passed with HTTP responses still being written");
  }
  if (grpc_server) {
    // A call on a connection accepted just before StopAccepting may still be on its way to a
    // handler, and Shutdown would cancel it: wait until calls stop arriving. 250 ms is 20x the
    // longest such delay measured (12 ms, two busy cores: docs/grpc-drain.md); a client that
    // keeps calling a draining replica gets UNAVAILABLE meanwhile, up to the drain deadline.
    grpc_server->WaitQuiet(std::chrono::milliseconds(250), drain_deadline);
    // gRPC kept answering on open connections during the drain (health NOT_SERVING, new work
    // UNAVAILABLE); a GOAWAY now tells their peers to go. Calls
    // still open now (e.g. an idle bidirectional stream) get what is left of the drain time.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        drain_deadline - std::chrono::steady_clock::now());
    grpc_server->Shutdown(std::max(left, std::chrono::milliseconds(0)));
  }
  (*server)->Stop();
  if (wyoming_server) wyoming_server->Stop();
  // A model load cannot be interrupted (an ONNX session being built, a file on a hung mount), and
  // the service cannot be destroyed under it. If it outlasts the drain, the process exits now,
  // skipping destructors: nothing is in flight any more, the listeners are closed, and the drain
  // timeout is a promise to whoever sent SIGTERM. LoadModels starts no further model once
  // draining, so this only waits for the one in progress.
  if (loaded.wait_until(drain_deadline) != std::future_status::ready) {
    spdlog::warn("drain timeout passed while a model was still loading; exiting without it");
    spdlog::info("stopped");
    spdlog::default_logger()->flush();
    std::_Exit(0);
  }
  loader.join();
  faults.reset();          // its delay timers must not hand a request to a stopped service
  (*service)->Shutdown();  // stops schedulers; unfinished requests end with Unavailable
  // The transports go before the service: a response still being written when the I/O threads
  // stopped is destroyed with its connection, and it holds its job, whose strand lives on the
  // service's encode pool (destroying the service first was a use-after-free at exit).
  grpc_server.reset();
  wyoming_server.reset();
  server->reset();
  service->reset();
  spdlog::info("stopped");
  return 0;
}

}  // namespace voxserve::server
