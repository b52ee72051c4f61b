// CosyVoice's LLM step graph (a bundle's llm_step*.onnx, tools/cosyvoice_export/llm_step_graph.py)
// with its KV cache, run as a decoder runtime runs it (docs/cosyvoice-generation.md, "The step
// graph"): a prefill writes one row's prompt into its slots, a decode step advances rows [0, n)
// by one position each; GroupQueryAttention attends to each row's own filled slots and writes the
// new keys and values in place. With CUDA graphs (the CUDA provider), each decode batch bucket
// (1, 2, 4, 8, ... max_active rows) is captured once and replayed: its inputs go through fixed
// device buffers (one small upload and one download run per step), prefills run uncaptured.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/llm_kv_cache.h"
#include "engine/onnx/onnx_session.h"

namespace voxserve::engine::cosyvoice {

// How the step graph runs (engine options llm_precision, llm_cuda_graphs, llm_attention).
// Plain data, owned by value.
struct LlmRuntimeOptions {
  // fp32 | fp16 | bf16 | auto: the bundle's llm_step graph of that precision; auto takes fp16
  // with the CUDA provider, fp32 with the CPU's. ONNX Runtime has GroupQueryAttention in fp32 and
  // fp16 on the CPU, in fp16 and bf16 on CUDA.
  std::string precision = "auto";
  // auto | on | off: CUDA graphs for decode steps. auto = on with the CUDA provider. A provider
  // or ONNX Runtime without them runs plain (logged once).
  std::string cuda_graphs = "auto";
  // flash | auto: the CUDA attention kernel. flash (ORT's flash attention, GPUs of compute
  // capability 8.0 and later) reads each row's filled slots; auto leaves ORT's choice (older
  // GPUs: memory-efficient attention).
  std::string attention = "flash";
  // Decode in batch buckets through fixed buffers even without CUDA graphs: what the CUDA graph
  // path does to its shapes and copies, on any provider (tests run it on the CPU).
  bool fixed_shapes = false;

  absl::Status Validate() const;  // names the option and its allowed values
};

// Plain data, owned by value.
struct LlmStepGraphConfig {
  int rows = 8;         // max_active: KV cache rows
  int capacity = 1024;  // slots per row; at most the graph's max_positions
  LlmRuntimeOptions runtime;
  onnx::OnnxSessionConfig session;

  absl::Status Validate() const;  // names the field and its allowed range
};

// Owned by one LlmDecoder (one engine worker thread): not thread-safe.
class LlmStepGraph {
 public:
  static absl::StatusOr<std::unique_ptr<LlmStepGraph>> Create(const BundleManifest& manifest,
                                                              const std::string& bundle_dir,
                                                              const LlmStepGraphConfig& config);
  ~LlmStepGraph();
  // The precision Create would pick ("auto" resolved), or why it cannot run: a role the bundle
  // lacks, bf16 without CUDA.
  static absl::StatusOr<std::string> ResolvePrecision(const BundleManifest& manifest,
                                                      const LlmStepGraphConfig& config);
  // The stated bound of a precision's log-probabilities against the float32 goldens, as
  // BundleVerifier::AddStage takes it (verify-bundle, tests): -1 for fp32, whose bound is the
  // goldens' own.
  static double LogpTolerance(const std::string& precision);

  // Row `row`'s prompt: `embeds` [S, hidden] go into its slots 0 .. S - 1 (what the row held
  // before is gone); `logits` [head_outputs] of its last position. Runs uncaptured.
  absl::Status Prefill(int64_t row, std::span<const float> embeds, std::span<float> logits,
                       onnx::HostTraffic& traffic);
  // One position for each of rows [0, n), n = lengths.size(): row r's input `embeds` [n, hidden]
  // row r goes to slot lengths[r] and attends to slots 0 .. lengths[r]; `logits` [n,
  // head_outputs]. A row that holds no sequence takes length 0 and any input (its slot 0 is
  // written, its logits are to be ignored). Every length + 1 must fit the capacity.
  absl::Status Decode(std::span<const float> embeds, std::span<const int32_t> lengths,
                      std::span<float> logits, onnx::HostTraffic& traffic);

  // The rows a decode of n rows runs: its bucket with fixed shapes, else n.
  int64_t BatchRows(int64_t n) const;
  const std::vector<int64_t>& buckets() const { return buckets_; }
  const std::string& precision() const { return precision_; }
  bool cuda_graphs() const { return cuda_graphs_; }
  bool fixed_shapes() const { return fixed_shapes_; }
  int max_positions() const { return max_positions_; }
  int64_t hidden() const { return hidden_; }
  int64_t vocab() const { return vocab_; }
  const KvCache& cache() const { return *cache_; }
  bool cache_in_host_memory() const { return step_->provider_memory_is_host(); }
  const onnx::OnnxSession& session() const { return *step_; }

 private:
  LlmStepGraph() = default;
  // The past_* inputs and present_* outputs of rows [first, first + count), the same memory.
  void BindCache(int64_t first, int64_t count,
                 std::vector<std::pair<std::string, onnx::TensorView>>& in,
                 std::vector<std::pair<std::string, onnx::TensorView>>& out) const;
  // One decode run of `rows` rows (total_sequence_length the capacity) over the given views of
  // its inputs and logits: host memory, or the fixed buffers.
  absl::Status RunDecode(onnx::TensorView embeds, onnx::TensorView lengths, onnx::TensorView logits,
                         int64_t rows, onnx::HostTraffic& traffic, int cuda_graph_id);
  // The bucket's decode through the fixed buffers (CUDA graph id = bucket index + 1 when on).
  absl::Status DecodeFixed(std::span<const float> embeds, std::span<const int32_t> lengths,
                           std::span<float> logits, onnx::HostTraffic& traffic);
  // Runs every bucket's decode until ORT has captured its graph (at Create, while the rows are
  // free: a dummy decode writes slot 0 of each row).
  absl::Status CaptureGraphs();

  LlmStepGraphConfig config_;
  std::string precision_;
  bool cuda_graphs_ = false, fixed_shapes_ = false;
  int layers_ = 0, max_positions_ = 0;
  int64_t hidden_ = 0, vocab_ = 0;
  std::vector<int64_t> buckets_;
  std::unique_ptr<onnx::OnnxSession> step_;
  std::unique_ptr<KvCache> cache_;
  // Fixed shapes: the in-memory copy graphs and the buffers the step reads and writes (the
  // upload session's allocator's: declared after it).
  std::unique_ptr<onnx::OnnxSession> upload_, download_;
  onnx::ProviderBuffer embeds_, seqlens_, logits_;
  // Host staging for a bucket's inputs (padding rows: zeros, length 0), reused every step.
  std::vector<float> staged_embeds_;
  std::vector<int32_t> staged_lengths_;
  int32_t total_length_ = 0;  // total_sequence_length: a CPU-side input of GroupQueryAttention
  std::vector<std::string> past_names_, present_names_;
};

}  // namespace voxserve::engine::cosyvoice
