#include "engine/onnx/onnx_session_config.h"

#include "core/error.h"
#include "core/options.h"

namespace voxserve::engine::onnx {
namespace {

absl::Status WithKey(const std::string& key, const absl::Status& status) {
  if (status.ok()) return status;
  return core::InvalidArgument("options." + key + ": " + std::string(status.message()));
}

absl::Status OneOf(const std::string& key, const std::string& value, const char* allowed) {
  std::string list = std::string(" ") + allowed + " ";
  if (value.empty() || value.find(' ') != std::string::npos ||
      list.find(" " + value + " ") == std::string::npos) {
    return core::InvalidArgument("options." + key + ": '" + value + "' is not one of: " + allowed);
  }
  return absl::OkStatus();
}

}  // namespace

const char* OnnxSessionConfig::KnownKeys() {
  return "intra_op_threads, inter_op_threads, graph_optimization, optimized_model_path, "
         "allow_spinning, cpu_memory_arena, arena_keep_elements, execution_provider, "
         "cuda_device_id, "
         "cuda_memory_limit_bytes, cudnn_conv_algo_search, cuda_tf32";
}

absl::Status OnnxSessionConfig::Set(const std::string& key, const std::string& value) {
  long long number = 0;
  if (key == "intra_op_threads" || key == "inter_op_threads") {
    absl::Status status = core::ParseInt(value, 0, 1024, &number);
    if (status.ok()) (key == "intra_op_threads" ? intra_op_threads : inter_op_threads) = number;
    return WithKey(key, status);
  }
  if (key == "graph_optimization") {
    graph_optimization = value;
    return absl::OkStatus();  // checked by Validate
  }
  if (key == "optimized_model_path") {
    optimized_model_path = value;
    return absl::OkStatus();
  }
  if (key == "allow_spinning") return WithKey(key, core::ParseBool(value, &allow_spinning));
  if (key == "cpu_memory_arena") {
    // true/false as before the shrink mode existed.
    cpu_memory_arena = value == "true" ? "on" : value == "false" ? "off" : value;
    return absl::OkStatus();  // checked by Validate
  }
  if (key == "arena_keep_elements") {
    absl::Status status = core::ParseInt(value, 0, 1LL << 40, &number);
    if (status.ok()) arena_keep_elements = number;
    return WithKey(key, status);
  }
  if (key == "execution_provider") {
    execution_provider = value;
    return absl::OkStatus();
  }
  if (key == "cuda_device_id") {
    absl::Status status = core::ParseInt(value, 0, 1023, &number);
    if (status.ok()) cuda_device_id = static_cast<int>(number);
    return WithKey(key, status);
  }
  if (key == "cuda_memory_limit_bytes") {
    absl::Status status = core::ParseInt(value, 0, 1LL << 50, &number);
    if (status.ok()) cuda_memory_limit_bytes = static_cast<uint64_t>(number);
    return WithKey(key, status);
  }
  if (key == "cuda_tf32") return WithKey(key, core::ParseBool(value, &cuda_tf32));
  if (key == "cudnn_conv_algo_search") {
    cudnn_conv_algo_search = value;
    return absl::OkStatus();
  }
  return absl::NotFoundError(key);
}

absl::Status OnnxSessionConfig::Validate() const {
  if (auto s = OneOf("graph_optimization", graph_optimization, "disable basic extended all");
      !s.ok()) {
    return s;
  }
  if (auto s = OneOf("execution_provider", execution_provider, "cpu cuda"); !s.ok()) return s;
  if (auto s = OneOf("cpu_memory_arena", cpu_memory_arena, "off on shrink"); !s.ok()) return s;
  if (auto s =
          OneOf("cudnn_conv_algo_search", cudnn_conv_algo_search, "heuristic exhaustive default");
      !s.ok()) {
    return s;
  }
  if (intra_op_threads < 0 || inter_op_threads < 0) {
    return core::InvalidArgument("intra_op_threads and inter_op_threads must be >= 0");
  }
  return absl::OkStatus();
}

}  // namespace voxserve::engine::onnx
