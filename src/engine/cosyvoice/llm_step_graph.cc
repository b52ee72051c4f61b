#include "engine/cosyvoice/llm_step_graph.h"

#include <algorithm>
#include <atomic>
#include <filesystem>

#include "core/error.h"
#include "spdlog/spdlog.h"

namespace voxserve::engine::cosyvoice {
namespace {

using onnx::ElementType;
using onnx::TensorView;
using Bindings = std::vector<std::pair<std::string, TensorView>>;

// The exporter's name for this graph contract (tools/cosyvoice_export/llm_step_graph.py FORMAT).
constexpr const char* kStepFormat = "voxserve-cosyvoice-llm-step-1";
// ORT's CUDA provider runs a graph id plainly twice before it captures it (ORT's Run repeats
// itself until it has); two runs per bucket at Create, so no request pays a capture.
constexpr int kCaptureRuns = 2;

const char* RoleFor(const std::string& precision) {
  if (precision == "fp16") return "llm_step_fp16";
  if (precision == "bf16") return "llm_step_bf16";
  return "llm_step";
}

// Copies inputs to outputs (the fixed shapes' upload and download runs). Identity between a
// graph's input and output is kept by ORT (a graph output cannot be eliminated).
onnx::GraphSpec CopyGraph(const char* name, std::vector<onnx::GraphSpec::Value> values) {
  onnx::GraphSpec g;
  g.name = name;
  for (const auto& v : values) {
    g.inputs.push_back(v);
    g.outputs.push_back({v.name + "_out", v.type, v.rank});
    g.nodes.push_back({"Identity", {v.name}, {v.name + "_out"}, {}});
  }
  return g;
}

TensorView Host(ElementType type, const void* data, std::vector<int64_t> shape) {
  // ORT only reads an input view; the cast is what TensorView's one pointer type needs.
  return {type, const_cast<void*>(data), std::move(shape)};
}

// Once per process: a fallback to plain runs is logged at its first occurrence only.
void LogPlainRunsOnce(const std::string& why) {
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    spdlog::warn("cosyvoice LLM: no CUDA graphs, decode steps run plainly: {}", why);
  }
}

}  // namespace

absl::Status LlmRuntimeOptions::Validate() const {
  if (precision != "auto" && precision != "fp32" && precision != "fp16" && precision != "bf16") {
    return core::InvalidArgument("llm_precision: '" + precision +
                                 "' is not one of: auto, fp32, fp16, bf16");
  }
  if (cuda_graphs != "auto" && cuda_graphs != "on" && cuda_graphs != "off") {
    return core::InvalidArgument("llm_cuda_graphs: '" + cuda_graphs +
                                 "' is not one of: auto, on, off");
  }
  if (attention != "flash" && attention != "auto") {
    return core::InvalidArgument("llm_attention: '" + attention + "' is not one of: flash, auto");
  }
  return absl::OkStatus();
}

absl::Status LlmStepGraphConfig::Validate() const {
  if (rows < 1 || rows > 256) {
    return core::InvalidArgument("max_active: expected 1..256, found " + std::to_string(rows));
  }
  if (capacity < 2 || capacity > 65536) {
    return core::InvalidArgument("capacity: expected 2..65536 cache slots, found " +
                                 std::to_string(capacity));
  }
  if (absl::Status s = runtime.Validate(); !s.ok()) return s;
  return session.Validate();
}

LlmStepGraph::~LlmStepGraph() = default;

absl::StatusOr<std::string> LlmStepGraph::ResolvePrecision(const BundleManifest& manifest,
                                                           const LlmStepGraphConfig& config) {
  const bool cuda = config.session.execution_provider == "cuda";
  std::string precision = config.runtime.precision;
  if (precision == "auto") {
    precision = cuda && manifest.graph("llm_step_fp16") != nullptr ? "fp16" : "fp32";
  }
  if (precision == "bf16" && !cuda) {
    return absl::FailedPreconditionError(
        "llm_precision bf16 runs on the CUDA provider only (ONNX Runtime's CPU provider has no "
        "bfloat16 MatMul); use fp32 or fp16");
  }
  if (precision == "fp32" && cuda) {
    return absl::FailedPreconditionError(
        "llm_precision fp32 runs on the CPU provider only (ONNX Runtime's CUDA provider has no "
        "float32 GroupQueryAttention: its attention would run on the host); use fp16 or bf16");
  }
  if (manifest.graph(RoleFor(precision)) == nullptr) {
    return core::NotFound(std::string("bundle has no graph ") + RoleFor(precision) +
                          " (llm_precision " + precision +
                          "): tools/cosyvoice_export/export.py --llm-precisions writes it");
  }
  return precision;
}

double LlmStepGraph::LogpTolerance(const std::string& precision) {
  // Max abs error of log-probabilities against float32 (docs/cosyvoice-generation.md, "The step
  // graph"): float16 keeps 11 bits, bfloat16 8, through 24 layers of sums; the tiny bundle
  // measures well inside these on the CPU (fp16), and the GPU check measures both.
  if (precision == "fp16") return 5e-2;
  if (precision == "bf16") return 2.5e-1;
  return -1;
}

absl::StatusOr<std::unique_ptr<LlmStepGraph>> LlmStepGraph::Create(
    const BundleManifest& manifest, const std::string& bundle_dir,
    const LlmStepGraphConfig& config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::unique_ptr<LlmStepGraph> g(new LlmStepGraph());
  g->config_ = config;
  const bool cuda = config.session.execution_provider == "cuda";
  auto precision = ResolvePrecision(manifest, config);
  if (!precision.ok()) return precision.status();
  const GraphEntry* entry = manifest.graph(RoleFor(*precision));
  g->precision_ = *precision;
  const std::string path = (std::filesystem::path(bundle_dir) / entry->file).string();
  const std::string& want = config.runtime.cuda_graphs;
  bool graphs = want == "on" || (want == "auto" && cuda);
  if (graphs && !cuda) {
    LogPlainRunsOnce("they need execution_provider cuda");
    graphs = false;
  }
  onnx::OnnxSessionConfig session = config.session;
  session.cuda_graph = graphs;
  // Flash attention on CUDA (ORT's sdpa_kernel backend mask, FLASH_ATTENTION = 1): its decode
  // kernel reads each row's own filled slots, and it is the kernel ORT captures in graphs
  // (by default ORT prefers cuDNN's SDPA on Hopper, over the whole capacity with a mask).
  if (cuda && config.runtime.attention == "flash") session.cuda_sdpa_kernel = 1;
  // The same graph without CUDA graphs, where ORT refuses or cannot make them (logged once).
  auto plain_session = [&](absl::Status why) {
    LogPlainRunsOnce(std::string(why.message()));
    graphs = false;
    session.cuda_graph = false;
    return onnx::OnnxSession::Create(path, session);
  };
  auto opened = onnx::OnnxSession::Create(path, session);
  // ORT refuses graph capture for a graph with nodes off the CUDA provider (and an ORT without
  // it refuses the option).
  if (!opened.ok() && graphs) opened = plain_session(opened.status());
  if (!opened.ok()) return opened.status();
  g->step_ = std::move(*opened);
  g->cuda_graphs_ = graphs;
  g->fixed_shapes_ = graphs || config.runtime.fixed_shapes;

  const onnx::OnnxSession& step = *g->step_;
  if (step.Metadata("format").value_or("") != kStepFormat) {
    return core::InvalidArgument(path +
                                 ": not an LLM step graph of this voxserve (metadata format '" +
                                 step.Metadata("format").value_or("") + "', expected '" +
                                 kStepFormat + "'): re-export the bundle");
  }
  g->max_positions_ = std::atoi(step.Metadata("max_positions").value_or("0").c_str());
  if (config.capacity > g->max_positions_) {
    return core::InvalidArgument("capacity: " + std::to_string(config.capacity) +
                                 " cache slots exceed the positions the LLM graph's rotary "
                                 "tables hold (" +
                                 std::to_string(g->max_positions_) + ")");
  }
  const auto& llm = manifest.llm;
  g->layers_ = llm.num_layers;
  g->hidden_ = llm.hidden_size;
  g->vocab_ = manifest.vocab.head_outputs;
  for (const char* name : {"inputs_embeds", "seqlens_k", "total_sequence_length"}) {
    if (step.FindInput(name) == nullptr) {
      return core::InvalidArgument(path + ": no input " + name);
    }
  }
  for (int layer = 0; layer < g->layers_; ++layer) {
    for (const char* kind : {"key_", "value_"}) {
      g->past_names_.push_back(std::string("past_") + kind + std::to_string(layer));
      g->present_names_.push_back(std::string("present_") + kind + std::to_string(layer));
      if (step.FindInput(g->past_names_.back()) == nullptr) {
        return core::InvalidArgument(path + ": no input " + g->past_names_.back());
      }
    }
  }
  const ElementType cache_type = step.FindInput("past_key_0")->type;
  KvCacheShape shape{llm.num_layers,  config.rows,  llm.num_kv_heads,
                     config.capacity, llm.head_dim, cache_type};
  auto cache = KvCache::Create(step, shape, session);
  if (!cache.ok()) return cache.status();
  g->cache_ = std::move(*cache);

  for (int64_t b = 1; b < config.rows; b *= 2) g->buckets_.push_back(b);
  g->buckets_.push_back(config.rows);
  if (g->fixed_shapes_) {
    onnx::OnnxSessionConfig plain = session;
    plain.cuda_graph = false;
    auto upload = onnx::OnnxSession::CreateFromGraph(
        CopyGraph("cosyvoice_llm_upload",
                  {{"embeds", ElementType::kFloat, 3}, {"lengths", ElementType::kInt32, 1}}),
        plain);
    if (!upload.ok()) return upload.status();
    g->upload_ = std::move(*upload);
    auto download = onnx::OnnxSession::CreateFromGraph(
        CopyGraph("cosyvoice_llm_download", {{"logits", ElementType::kFloat, 2}}), plain);
    if (!download.ok()) return download.status();
    g->download_ = std::move(*download);
    for (auto [buffer, bytes] : {std::pair{&g->embeds_, config.rows * g->hidden_ * 4},
                                 {&g->seqlens_, int64_t{config.rows} * 4},
                                 {&g->logits_, config.rows * g->vocab_ * 4}}) {
      auto allocated = g->upload_->AllocateProvider(static_cast<size_t>(bytes));
      if (!allocated.ok()) return allocated.status();
      *buffer = std::move(*allocated);
    }
  }
  if (g->cuda_graphs_) {
    // A capture ORT could not make (a kernel it cannot record): the same graph, plain.
    if (absl::Status s = g->CaptureGraphs(); !s.ok()) {
      auto plain = plain_session(s);
      if (!plain.ok()) return plain.status();
      g->step_ = std::move(*plain);
      g->cuda_graphs_ = false;
    }
  }
  return g;
}

int64_t LlmStepGraph::BatchRows(int64_t n) const {
  if (!fixed_shapes_) return n;
  for (int64_t b : buckets_) {
    if (b >= n) return b;
  }
  return buckets_.back();
}

void LlmStepGraph::BindCache(int64_t first, int64_t count, Bindings& in, Bindings& out) const {
  for (size_t i = 0; i < past_names_.size(); ++i) {
    const int layer = static_cast<int>(i / 2), kind = static_cast<int>(i % 2);
    in.push_back({past_names_[i], cache_->Rows(layer, kind, first, count)});
    out.push_back({present_names_[i], cache_->Rows(layer, kind, first, count)});
  }
}

absl::Status LlmStepGraph::Prefill(int64_t row, std::span<const float> embeds,
                                   std::span<float> logits, onnx::HostTraffic& traffic) {
  const int64_t s = static_cast<int64_t>(embeds.size()) / hidden_;
  if (row < 0 || row >= config_.rows || s < 1 ||
      s * hidden_ != static_cast<int64_t>(embeds.size()) || s > config_.capacity ||
      static_cast<int64_t>(logits.size()) != vocab_) {
    return core::Internal("LLM prefill: row or sizes out of range");
  }
  // The first prompt of GroupQueryAttention: S new positions and a total of S, so the keys go
  // to slots 0 .. S - 1 at positions 0 .. S - 1.
  const int32_t last = static_cast<int32_t>(s - 1);
  total_length_ = static_cast<int32_t>(s);
  Bindings in = {{"inputs_embeds", Host(ElementType::kFloat, embeds.data(), {1, s, hidden_})},
                 {"seqlens_k", Host(ElementType::kInt32, &last, {1})},
                 {"total_sequence_length", Host(ElementType::kInt32, &total_length_, {})}};
  Bindings out = {{"logits", {ElementType::kFloat, logits.data(), {1, vocab_}}}};
  BindCache(row, 1, in, out);
  return step_->RunInPlace(in, out, &traffic, cuda_graphs_ ? -1 : 0);
}

absl::Status LlmStepGraph::Decode(std::span<const float> embeds, std::span<const int32_t> lengths,
                                  std::span<float> logits, onnx::HostTraffic& traffic) {
  const int64_t n = static_cast<int64_t>(lengths.size());
  if (n < 1 || n > config_.rows || static_cast<int64_t>(embeds.size()) != n * hidden_ ||
      static_cast<int64_t>(logits.size()) != n * vocab_) {
    return core::Internal("LLM decode: rows or sizes out of range");
  }
  for (int32_t length : lengths) {
    if (length < 0 || length >= config_.capacity) {
      return core::Internal("LLM decode: slot " + std::to_string(length) +
                            " is past the capacity " + std::to_string(config_.capacity));
    }
  }
  if (fixed_shapes_) return DecodeFixed(embeds, lengths, logits, traffic);
  return RunDecode(Host(ElementType::kFloat, embeds.data(), {n, 1, hidden_}),
                   Host(ElementType::kInt32, lengths.data(), {n}),
                   {ElementType::kFloat, logits.data(), {n, vocab_}}, n, traffic, 0);
}

absl::Status LlmStepGraph::RunDecode(TensorView embeds, TensorView lengths, TensorView logits,
                                     int64_t rows, onnx::HostTraffic& traffic, int cuda_graph_id) {
  // Token generation: S = 1 and a total of the capacity on every step, as a captured graph
  // keeps it (its host value is frozen at capture): attention still reads each row's own
  // seqlens_k + 1 slots; a total of 1 would read as a first prompt.
  total_length_ = config_.capacity;
  Bindings in = {{"inputs_embeds", std::move(embeds)},
                 {"seqlens_k", std::move(lengths)},
                 {"total_sequence_length", Host(ElementType::kInt32, &total_length_, {})}};
  Bindings out = {{"logits", std::move(logits)}};
  BindCache(0, rows, in, out);
  return step_->RunInPlace(in, out, &traffic, cuda_graph_id);
}

absl::Status LlmStepGraph::DecodeFixed(std::span<const float> embeds,
                                       std::span<const int32_t> lengths, std::span<float> logits,
                                       onnx::HostTraffic& traffic) {
  const int64_t n = static_cast<int64_t>(lengths.size()), b = BatchRows(n);
  const size_t bucket =
      static_cast<size_t>(std::find(buckets_.begin(), buckets_.end(), b) - buckets_.begin());
  // Padding rows: zero input at slot 0 of rows that hold nothing (n .. b - 1 are free: the
  // decoder's live rows are below n).
  staged_embeds_.assign(static_cast<size_t>(b * hidden_), 0.0f);
  std::copy(embeds.begin(), embeds.end(), staged_embeds_.begin());
  staged_lengths_.assign(static_cast<size_t>(b), 0);
  std::copy(lengths.begin(), lengths.end(), staged_lengths_.begin());
  if (absl::Status s = upload_->RunInPlace(
          {{"embeds", {ElementType::kFloat, staged_embeds_.data(), {b, 1, hidden_}}},
           {"lengths", {ElementType::kInt32, staged_lengths_.data(), {b}}}},
          {{"embeds_out", embeds_.View(ElementType::kFloat, {b, 1, hidden_})},
           {"lengths_out", seqlens_.View(ElementType::kInt32, {b})}},
          &traffic);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = RunDecode(embeds_.View(ElementType::kFloat, {b, 1, hidden_}),
                                 seqlens_.View(ElementType::kInt32, {b}),
                                 logits_.View(ElementType::kFloat, {b, vocab_}), b, traffic,
                                 cuda_graphs_ ? static_cast<int>(bucket) + 1 : 0);
      !s.ok()) {
    return s;
  }
  return download_->RunInPlace({{"logits", logits_.View(ElementType::kFloat, {n, vocab_})}},
                               {{"logits_out", {ElementType::kFloat, logits.data(), {n, vocab_}}}},
                               &traffic);
}

absl::Status LlmStepGraph::CaptureGraphs() {
  std::vector<float> logits;
  for (int64_t b : buckets_) {
    std::vector<float> embeds(static_cast<size_t>(b * hidden_), 0.0f);
    std::vector<int32_t> lengths(static_cast<size_t>(b), 0);
    logits.resize(static_cast<size_t>(b * vocab_));
    for (int run = 0; run < kCaptureRuns; ++run) {
      onnx::HostTraffic ignored;
      if (absl::Status s = DecodeFixed(embeds, lengths, logits, ignored); !s.ok()) {
        return absl::Status(s.code(), "capturing the LLM's CUDA graph for " + std::to_string(b) +
                                          " rows: " + std::string(s.message()));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
