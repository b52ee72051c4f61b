#include "engine/onnx/ort_env.h"

#include <onnxruntime_cxx_api.h>

#include "spdlog/spdlog.h"

namespace voxserve::engine::onnx {
namespace {

void LogToSpdlog(void* /*param*/, OrtLoggingLevel severity, const char* category,
                 const char* /*logid*/, const char* code_location, const char* message) {
  spdlog::level::level_enum level = spdlog::level::debug;
  switch (severity) {
    case ORT_LOGGING_LEVEL_VERBOSE:
      level = spdlog::level::trace;
      break;
    case ORT_LOGGING_LEVEL_INFO:
      level = spdlog::level::debug;
      break;
    case ORT_LOGGING_LEVEL_WARNING:
      level = spdlog::level::warn;
      break;
    case ORT_LOGGING_LEVEL_ERROR:
      level = spdlog::level::err;
      break;
    case ORT_LOGGING_LEVEL_FATAL:
      level = spdlog::level::critical;
      break;
  }
  spdlog::log(level, "onnxruntime [{}] {} ({})", category, message, code_location);
}

}  // namespace

Ort::Env& OrtEnvironment() {
  // Warnings and above: ORT's info level narrates every session's graph transformations.
  static Ort::Env* env = new Ort::Env(ORT_LOGGING_LEVEL_WARNING, "voxserve", LogToSpdlog, nullptr);
  return *env;
}

}  // namespace voxserve::engine::onnx
