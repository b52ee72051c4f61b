// How one ONNX model's session runs: threads, graph optimization, execution provider. Read from
// a model's `options` (YAML models[].options or the defaults of discovered models).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace voxserve::engine::onnx {

struct OnnxSessionConfig {
  // Threads of one Run. 0 = ORT's default (one per physical core). Instances × threads should
  // not exceed the cores (ARCHITECTURE.md).
  int intra_op_threads = 0;
  int inter_op_threads = 0;                // only used by ORT's parallel executor; 0 = default
  std::string graph_optimization = "all";  // disable | basic | extended | all
  // When set, ORT writes the optimized graph there at load; a later load may name that file as
  // the model (with graph_optimization: disable) to start faster. Same machine and provider only.
  std::string optimized_model_path;
  // Busy-waiting of ORT's worker threads between ops. Off by default on a server: spinning burns
  // cores that other requests (and other models) need.
  bool allow_spinning = false;
  // ORT's CPU arena: off | on | shrink. On, it keeps the largest tensors it ever allocated; with
  // variable-length TTS inputs that is the longest sentence ever seen (Piper's own C++ turns it
  // off for that reason). Off, every tensor of every Run is a malloc and free. shrink (default):
  // on, with ORT's per-Run arena shrinkage (run option memory.enable_memory_arena_shrinkage), so
  // a Run reuses its blocks and gives them back at its end; bench/RESULTS.md has the figures.
  // With execution_provider cuda, shrink also shrinks the device arena.
  std::string cpu_memory_arena = "shrink";

  std::string execution_provider = "cpu";  // cpu | cuda
  int cuda_device_id = 0;
  uint64_t cuda_memory_limit_bytes = 0;  // 0 = no limit (ORT's gpu_mem_limit default)
  // cuDNN convolution algorithm search: heuristic (default here) | exhaustive | default. VITS
  // and Kokoro see a new input length with every sentence; exhaustive search re-benchmarks every
  // new shape (Piper and sherpa-onnx pick heuristic for the same reason).
  std::string cudnn_conv_algo_search = "heuristic";

  // Sets one option from its text; NotFound when `key` is not a session option (so callers can
  // try their own keys), InvalidArgument naming the key and the allowed values otherwise.
  absl::Status Set(const std::string& key, const std::string& value);
  // Keys Set() knows, for error messages.
  static const char* KnownKeys();

  absl::Status Validate() const;
};

}  // namespace voxserve::engine::onnx
