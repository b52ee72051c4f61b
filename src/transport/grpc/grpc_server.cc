#include "transport/grpc/grpc_server.h"

#include <google/protobuf/stubs/logging.h>
#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_builder.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/structured_log.h"
#include "nlohmann/json.hpp"
#include "transport/grpc/core_log.h"
#include "transport/grpc/listening_sockets.h"
#include "transport/grpc/tts_grpc_service.h"

namespace voxserve::transport::grpc {
namespace {

// The health service names the whole server "" and each service by its full name.
constexpr const char* kServiceName = "voxserve.v1.TextToSpeech";

// How often readiness is sampled. Readiness has several sources (loading, a failed model, the
// drain); sampling the one predicate /health/ready uses keeps both answers identical.
constexpr std::chrono::milliseconds kReadinessPeriod{100};

std::string HostPort(const std::string& host, int port) {
  const bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  return (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

// libprotobuf writes its own lines to stderr (e.g. "[libprotobuf ERROR ...] String field ...
// contains invalid UTF-8 data" when a request has a string that is not UTF-8): route them into
// the server's log, in its format, with where protobuf said it.
void LogProtobufMessage(google::protobuf::LogLevel level, const char* filename, int line,
                        const std::string& message) {
  spdlog::level::level_enum ours = spdlog::level::info;
  switch (level) {
    case google::protobuf::LOGLEVEL_INFO:
      ours = spdlog::level::info;
      break;
    case google::protobuf::LOGLEVEL_WARNING:
      ours = spdlog::level::warn;
      break;
    case google::protobuf::LOGLEVEL_ERROR:
      ours = spdlog::level::err;
      break;
    case google::protobuf::LOGLEVEL_FATAL:
      ours = spdlog::level::critical;
      break;
  }
  core::LogFields(
      ours, message,
      {{"component", "protobuf"},
       {"source", std::string(filename == nullptr ? "" : filename) + ":" + std::to_string(line)}});
}

void SetServing(::grpc::Server& server, bool serving) {
  ::grpc::HealthCheckServiceInterface* health = server.GetHealthCheckService();
  if (health == nullptr) return;
  health->SetServingStatus(serving);  // "" and every registered name
  health->SetServingStatus(kServiceName, serving);
}

}  // namespace

GrpcServer::GrpcServer(std::string host, service::TtsService& service,
                       core::MetricsRegistry& registry, CallGate gate)
    : host_(std::move(host)), service_(service), metrics_(registry) {
  tts_service_ = std::make_unique<TtsGrpcService>(HandlerEnv{service, metrics_, std::move(gate)});
}

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Create(const GrpcConfig& config,
                                                               std::string_view fallback_host,
                                                               service::TtsService& service,
                                                               core::MetricsRegistry& registry,
                                                               GrpcServerOptions options) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::string host = config.host.empty() ? std::string(fallback_host) : config.host;
  std::unique_ptr<GrpcServer> server(
      new GrpcServer(host, service, registry, std::move(options.gate)));

  // Process-wide switches, set before the server takes calls (SetLogHandler is not thread-safe);
  // the health and reflection ones are read by the builder below.
  google::protobuf::SetLogHandler(&LogProtobufMessage);
  RouteGrpcCoreLog();
  ::grpc::EnableDefaultHealthCheckService(true);
  if (config.reflection) ::grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  ::grpc::ServerBuilder builder;
  std::shared_ptr<::grpc::ServerCredentials> credentials =
      options.credentials ? options.credentials : ::grpc::InsecureServerCredentials();
  builder.AddListeningPort(HostPort(host, config.port), credentials, &server->port_);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_message_bytes));
  // gRPC sets SO_REUSEPORT by default: a second server started on the same port would then
  // silently share its connections instead of failing to start.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(server->tts_service_.get());
  std::vector<std::unique_ptr<::grpc::experimental::ServerInterceptorFactoryInterface>> recorders;
  recorders.push_back(CallArrivals::Recorder(server->arrivals_));
  builder.experimental().SetInterceptorCreators(std::move(recorders));
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return core::Internal("gRPC cannot listen on " + HostPort(host, config.port) +
                          " (address in use or not local?)");
  }
  server->listening_sockets_ = ListeningSocketsOnPort(server->port_);
  // The default health service starts out SERVING; correct it before anyone knows the port.
  SetServing(*server->server_, false);
  server->readiness_ = std::thread([raw = server.get()] { raw->FollowReadiness(); });
  return server;
}

GrpcServer::~GrpcServer() { Shutdown(std::chrono::milliseconds(0)); }

std::string GrpcServer::address() const { return HostPort(host_, port_); }

void GrpcServer::FollowReadiness() {
  bool serving = false;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (bool ready = service_.Ready(); ready != serving) {
      serving = ready;
      SetServing(*server_, serving);
    }
    stop_.wait_for(lock, kReadinessPeriod, [this] { return stopping_; });
  }
}

void GrpcServer::StopAccepting() {
  if (listening_sockets_.empty()) {
    spdlog::warn("gRPC listener not found: new connections are accepted until the shutdown");
    return;
  }
  ExpectListenerStopped();
  RefuseNewConnections(listening_sockets_);
}

void GrpcServer::WaitQuiet(std::chrono::milliseconds quiet,
                           std::chrono::steady_clock::time_point deadline) {
  arrivals_.WaitQuiet(quiet, deadline);
}

void GrpcServer::Shutdown(std::chrono::milliseconds grace) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  stop_.notify_all();
  if (readiness_.joinable()) readiness_.join();
  if (server_ == nullptr) return;
  // Ends Watch streams too, which would otherwise hold the shutdown for the whole grace.
  if (auto* health = server_->GetHealthCheckService()) health->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
}

}  // namespace voxserve::transport::grpc
