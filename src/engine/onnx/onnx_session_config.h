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
  // ORT's CPU arena: off | on | shrink. off: every tensor of every Run is a fresh allocation
  // (Piper's own C++ does this), paid in page faults. on: the arena keeps the largest blocks
  // it ever needed; with variable-length TTS inputs that is the longest sentence ever seen, for
  // the life of the process. shrink (default): on, but a Run whose inputs hold more than
  // `arena_keep_elements` elements gives its blocks back at its end (ORT's run option
  // memory.enable_memory_arena_shrinkage; the CUDA arena too with execution_provider cuda).
  // Typical sentences then run as fast as with on, and a rare long one does not pin its memory.
  // Figures: bench/RESULTS.md (bench/onnx_arena_bench.py).
  std::string cpu_memory_arena = "shrink";
  // 512 elements: a Piper sentence of ~250 characters (ids with pads between phonemes), a
  // Kokoro one of ~250 (its 256-value style vector counts too).
  int64_t arena_keep_elements = 512;

  std::string execution_provider = "cpu";  // cpu | cuda
  int cuda_device_id = 0;
  uint64_t cuda_memory_limit_bytes = 0;  // 0 = no limit (ORT's gpu_mem_limit default)
  // cuDNN convolution algorithm search: heuristic (default here) | exhaustive | default. VITS
  // and Kokoro see a new input length with every sentence; exhaustive search re-benchmarks every
  // new shape (Piper and sherpa-onnx pick heuristic for the same reason).
  std::string cudnn_conv_algo_search = "heuristic";
  // TensorFloat-32 for float32 MatMul/Conv on Ampere and later (ORT's use_tf32, on by default
  // there). Off here: float32 graphs then compute as upstream's PyTorch does by default
  // (torch.backends.cuda.matmul.allow_tf32 = False), within the goldens' tolerances. On an H200
  // TF32 put CosyVoice's flow encoder and estimator 1.4e-3 and 6e-3 off their float32 goldens
  // (tolerance 1e-3) and changed continuous batching's tokens (scripts/gpu-check.sh, 2026-12-04).
  // For speed on a GPU, the float16 flow/HiFT bundle (export.py --fp16) is the checked lever.
  bool cuda_tf32 = false;
  // ORT's enable_cuda_graph for this session (not a YAML key: the CosyVoice LLM sets it on its
  // own step session, llm_step_graph.h). Runs then choose a graph by id (RunInPlace).
  bool cuda_graph = false;
  // ORT's CUDA sdpa_kernel (attention backends allowed, a bit mask; 0 = ORT's choice). Not a
  // YAML key either: the CosyVoice LLM picks flash attention for its step session.
  int cuda_sdpa_kernel = 0;

  // Sets one option from its text; NotFound when `key` is not a session option (so callers can
  // try their own keys), InvalidArgument naming the key and the allowed values otherwise.
  absl::Status Set(const std::string& key, const std::string& value);
  // Keys Set() knows, for error messages.
  static const char* KnownKeys();

  absl::Status Validate() const;
};

}  // namespace voxserve::engine::onnx
