// CosyVoice2's LLM decode loop with continuous batching over the bundle's llm_step graph
// (docs/cosyvoice-generation.md, "LLM decode loop"). Sequences join (Admit) and leave (finish,
// Release) between steps; each Step advances every running sequence by one token in one batched
// run of the step graph (llm_step_graph.h) over a KV cache preallocated as [max_active rows,
// capacity slots] per layer in the provider's memory; a sequence keeps its row for its life and
// a finished sequence's row is taken by the next newcomer (llm_kv_cache.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/llm_prompt.h"
#include "engine/cosyvoice/llm_step_graph.h"
#include "engine/cosyvoice/ras_sampler.h"
#include "engine/onnx/onnx_session.h"

namespace voxserve::engine::cosyvoice {

// Plain data, owned by value.
struct LlmDecoderConfig {
  int max_active = 8;   // rows of the KV cache: sequences decoded together
  int capacity = 1024;  // cache slots per row: prompt + generated tokens must fit
  // Newcomers prefilled per Step, each as its own run before the batched decode: bounds how long
  // one Step stalls the running rows (one prompt's prefill per step by default).
  int max_prefills_per_step = 1;
  LlmRuntimeOptions runtime;  // the step graph's precision, CUDA graphs, attention kernel
  onnx::OnnxSessionConfig session;

  absl::Status Validate() const;  // names the field and its allowed range
};

enum class LlmFinish { kNone, kStopToken, kMaxLength };

// Plain data. One sequence's outcome of a Step: a token, and/or the end of the sequence. A stop
// token ends it without a token (upstream yields none, llm.py:544); reaching max_len ends it with
// its last token. After an event with finish != kNone the sequence is gone and its row is free.
struct LlmEvent {
  uint64_t seq_id = 0;
  int64_t token = -1;  // -1: no token
  LlmFinish finish = LlmFinish::kNone;
};

// Plain data: figures of the last Step, for logs, benchmarks and tests.
struct LlmStepStats {
  int prefills = 0;  // newcomers prefilled
  int64_t prefill_tokens = 0;
  double prefill_ms = 0;  // the stall the running rows saw for them
  int decoded_rows = 0;   // sequences advanced by the batched decode run
  int batch_rows = 0;     // rows that run computed: up to the highest live row, or its bucket
  double decode_ms = 0;
  // Bytes the Step moved between host memory and the provider's memory, where the KV cache is:
  // inputs (embeddings, each row's filled length) and the logits back for sampling. Nothing of
  // the cache crosses. With the CPU provider both memories are the host's and ORT copies
  // nothing; the figures are what the CUDA provider copies over PCIe (docs/cosyvoice-generation.md,
  // "On a GPU").
  int64_t host_to_provider_bytes = 0;
  int64_t provider_to_host_bytes = 0;
  int64_t cache_written_bytes = 0;  // new keys/values the graph wrote into their slots, in place
};

// Owned by one engine worker thread: not thread-safe (all calls from that thread).
class LlmDecoder {
 public:
  static absl::StatusOr<std::unique_ptr<LlmDecoder>> Create(const BundleManifest& manifest,
                                                            const std::string& bundle_dir,
                                                            const LlmDecoderConfig& config);
  ~LlmDecoder();

  // Queues a sequence; it is prefilled by a later Step (at most max_prefills_per_step per Step,
  // in admission order). InvalidArgument for bad ids, an empty text or a sequence that cannot fit
  // `capacity`; AlreadyExists for a live seq_id; ResourceExhausted when max_active sequences are
  // live (running + queued).
  absl::Status Admit(uint64_t seq_id, LlmRequest request);
  // Cancels a live sequence: a queued one is dropped now, a running one frees its row at the
  // start of the next Step and gets no more events. NotFound for an unknown (or finished) id.
  absl::Status Release(uint64_t seq_id);
  // Frees released rows, runs one batched decode step for every running row, then prefills up to
  // max_prefills_per_step newcomers (each gets its first token in this Step). Empty when idle.
  absl::StatusOr<std::vector<LlmEvent>> Step();

  // The most text tokens a sequence may have with a prompt of these sizes (LlmRequest's
  // prompt_text_ids and prompt_speech_tokens) and still fit `capacity` with every token it may
  // generate (max_len, the bundle's max_token_text_ratio per text token); 0 when not even one
  // does. What Admit checks, for callers that cut their text to fit.
  size_t MaxTextTokens(size_t prompt_text_tokens, size_t prompt_speech_tokens) const;
  int capacity() const { return config_.capacity; }

  size_t running() const { return live_rows_; }
  size_t queued() const { return queue_.size(); }
  const LlmStepStats& last_step() const { return stats_; }
  // The KV cache's size: every layer's keys and values of max_active rows x capacity slots.
  int64_t cache_bytes() const { return graph_->cache().Bytes(); }
  // Whether the cache is in host memory (the CPU provider) or the device's (CUDA).
  bool cache_in_host_memory() const { return graph_->cache_in_host_memory(); }
  const LlmStepGraph& graph() const { return *graph_; }
  // Called with each sequence's log-probabilities [head_outputs] before sampling; it may edit
  // them (tests use it to force stop ids; a place for logit processors). Null: none.
  using LogpHook = std::function<void(uint64_t seq_id, std::span<float> logp)>;
  void SetLogpHook(LogpHook hook) { hook_ = std::move(hook); }

 private:
  // A cache row and the sequence in it, if any (live).
  struct Row {
    bool live = false;
    uint64_t seq_id = 0;
    int64_t length = 0;      // cache slots filled (= position id of the next input)
    int64_t next_token = 0;  // sampled, not yet fed
    std::vector<int64_t> decoded;
    TokenLimits limits;
    bool greedy = false;
    bool released = false;
    SequenceRng rng{0};
  };
  struct Queued {
    uint64_t seq_id = 0;
    LlmRequest request;
    std::vector<float> prefill;  // [S, hidden]
  };

  LlmDecoder() = default;
  absl::Status DecodeRunning(std::vector<LlmEvent>& events);
  absl::Status Prefill(Queued queued, std::vector<LlmEvent>& events);
  // log_softmax of row `index`'s logits, the hook, then its token (or its end).
  void Sample(size_t index, std::span<float> logits, std::vector<LlmEvent>& events);
  void Free(size_t index);

  BundleManifest manifest_;
  LlmDecoderConfig config_;
  RasConfig ras_;
  std::unique_ptr<LlmEmbeddings> embeddings_;
  std::unique_ptr<LlmStepGraph> graph_;
  int64_t hidden_ = 0, vocab_ = 0;
  std::vector<Row> rows_;  // max_active; index = cache row
  size_t live_rows_ = 0;
  std::deque<Queued> queue_;
  // Per-step staging, reused: the decode's inputs and every run's logits.
  std::vector<float> embeds_, logits_;
  std::vector<int32_t> lengths_;
  LlmStepStats stats_;
  LogpHook hook_;
};

}  // namespace voxserve::engine::cosyvoice
