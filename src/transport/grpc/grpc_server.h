// The gRPC listener: voxserve.v1.TextToSpeech, the standard health service (grpc.health.v1,
// SERVING exactly while the service is ready, as GET /health/ready) and server reflection.
#pragma once

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "core/metrics.h"
#include "service/tts_service.h"
#include "transport/grpc/call_arrivals.h"
#include "transport/grpc/call_gate.h"
#include "transport/grpc/grpc_config.h"
#include "transport/grpc/grpc_metrics.h"

namespace voxserve::transport::grpc {

// Hooks for the transport-neutral security modules (transport/tls, transport/auth).
struct GrpcServerOptions {
  // TLS (e.g. ::grpc::SslServerCredentials); null = plaintext.
  std::shared_ptr<::grpc::ServerCredentials> credentials;
  CallGate gate;  // per-call auth and limits; unset = every call is let through
};

// Create() on the startup thread; port()/address() anywhere; StopAccepting() and Shutdown()
// once each, from the thread that drains. The service and the registry must outlive the server.
class GrpcServer {
 public:
  // Binds and starts serving at once (health NOT_SERVING until the service is ready). The
  // listening address is config.host, or `fallback_host` (HTTP's) when that is empty.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Create(const GrpcConfig& config,
                                                            std::string_view fallback_host,
                                                            service::TtsService& service,
                                                            core::MetricsRegistry& registry,
                                                            GrpcServerOptions options = {});
  ~GrpcServer();  // Shutdown(0) unless done

  int port() const { return port_; }
  std::string address() const;  // HOST:PORT ([HOST]:PORT for IPv6)

  // The drain's first step: new connections are refused (a proxy retries those on another
  // replica), while the connections already open go on being served: a call on one gets the
  // service's answer (UNAVAILABLE while draining), never gRPC's shutdown CANCELLED. Without
  // the listener's sockets (no /proc) it does nothing and says so in the log.
  void StopAccepting();

  // After StopAccepting and once the service is idle: returns when no call has arrived for
  // `quiet` (or at `deadline`). A call on a connection accepted just before StopAccepting can
  // still be on its way to a handler; Shutdown would cancel it.
  void WaitQuiet(std::chrono::milliseconds quiet, std::chrono::steady_clock::time_point deadline);

  // Health turns NOT_SERVING for good; no new calls are accepted; calls still running may go on
  // for up to `grace`, then they are cancelled (their queued work dropped). Returns once every
  // call has ended.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  GrpcServer(std::string host, service::TtsService& service, core::MetricsRegistry& registry,
             CallGate gate);
  void FollowReadiness();

  const std::string host_;
  service::TtsService& service_;
  GrpcMetrics metrics_;
  std::unique_ptr<::grpc::Service> tts_service_;
  std::unique_ptr<::grpc::Server> server_;
  int port_ = 0;
  CallArrivals arrivals_;
  std::vector<int> listening_sockets_;  // gRPC's; found at Create, closed by gRPC

  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;  // guarded by mutex_
  std::thread readiness_;
};

}  // namespace voxserve::transport::grpc
