#include "transport/grpc/core_log.h"

#include <grpc/support/log.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>
#include <string_view>

namespace voxserve::transport::grpc {
namespace {

std::atomic<bool> listener_stopped{false};

std::string_view BaseName(const char* path) {
  std::string_view file = path == nullptr ? "" : path;
  const size_t slash = file.rfind('/');
  return slash == std::string_view::npos ? file : file.substr(slash + 1);
}

// Called on gRPC's threads; spdlog's loggers are safe cross thread.
void ToSpdlog(gpr_log_func_args* args) {
  const std::string_view message = args->message == nullptr ? "" : args->message;
  spdlog::level::level_enum level = spdlog::level::debug;
  switch (args->severity) {
    case GPR_LOG_SEVERITY_ERROR:
      level = spdlog::level::err;
      break;
    case GPR_LOG_SEVERITY_INFO:
      level = spdlog::level::info;
      break;
    case GPR_LOG_SEVERITY_DEBUG:
      break;
  }
  if (level == spdlog::level::err && listener_stopped.load() &&
      message.starts_with("Failed accept4")) {
    level = spdlog::level::debug;  // our own shutdown(2) of the listener (ExpectListenerStopped)
  }
  spdlog::log(level, "grpc: {} ({}:{})", message, BaseName(args->file), args->line);
}

}  // namespace

void RouteGrpcCoreLog() {
  static std::once_flag once;
  std::call_once(once, [] { gpr_set_log_function(ToSpdlog); });
}

void ExpectListenerStopped() { listener_stopped.store(true); }

}  // namespace voxserve::transport::grpc
