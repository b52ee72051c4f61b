// CosyVoice2's LLM decode loop with continuous batching over llm_backbone.onnx + llm_decoder.onnx
// (docs/cosyvoice-generation.md, "LLM decode loop"). Sequences join (Admit) and leave (finish,
// Release) between steps; each Step advances every running sequence by one token in one batched
// backbone run over a KV cache preallocated per layer as [max_active, kv_heads, capacity,
// head_dim] in the provider's memory and updated in place there (llm_kv_cache.h;
// docs/cosyvoice-bundle.md, "The LLM's KV cache layout").
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
#include "engine/cosyvoice/llm_kv_cache.h"
#include "engine/cosyvoice/llm_prompt.h"
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
  int decoded_rows = 0;   // rows in the batched decode run
  double decode_ms = 0;
  // Bytes the Step moved between host memory and the provider's memory, where the KV cache is:
  // inputs (embeddings, position ids, a prefill's attention mask, the slot indices and mask
  // values of the cache writes) and the logits back for sampling. Nothing of the cache itself
  // crosses. With the CPU provider both memories are the host's and ORT copies nothing; the
  // figures are what the CUDA provider copies over PCIe (docs/cosyvoice-generation.md, "On a
  // GPU").
  int64_t host_to_provider_bytes = 0;
  int64_t provider_to_host_bytes = 0;
  int64_t cache_written_bytes = 0;  // new keys/values written into their slots (provider memory)
  int64_t cache_moved_bytes = 0;    // finished rows' places refilled (provider memory)
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

  size_t running() const { return rows_.size(); }
  size_t queued() const { return queue_.size(); }
  const LlmStepStats& last_step() const { return stats_; }
  // The KV cache's size: every layer's keys and values of max_active rows x capacity slots.
  int64_t cache_bytes() const;
  // Whether the cache is in host memory (the CPU provider) or the device's (CUDA).
  bool cache_in_host_memory() const { return backbone_->provider_memory_is_host(); }
  // Called with each sequence's log-probabilities [head_outputs] before sampling; it may edit
  // them (tests use it to force stop ids; a place for logit processors). Null: none.
  using LogpHook = std::function<void(uint64_t seq_id, std::span<float> logp)>;
  void SetLogpHook(LogpHook hook) { hook_ = std::move(hook); }

 private:
  struct Row {
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
  // log_softmax(head(hidden rows)), then sample each row; rows_[first + i] for row i. `hidden`
  // [count, hidden_size] is in provider memory; only the logits come back to the host.
  absl::Status HeadAndSample(const onnx::TensorView& hidden, size_t first, size_t count,
                             std::vector<LlmEvent>& events);
  // Moves the last row into `index` (its slots and mask, in provider memory).
  absl::Status RemoveRow(size_t index);
  // The backbone's hidden_states scratch (provider memory) for `positions` rows x positions.
  absl::Status ReserveHidden(int64_t positions);
  // The past_* inputs (rows first .. first + count) and new_* outputs (s positions) of a run.
  void AddBackboneCache(int64_t first, int64_t count, int64_t s,
                        std::vector<std::pair<std::string, onnx::TensorView>>& in,
                        std::vector<std::pair<std::string, onnx::TensorView>>& out) const;
  void AddTraffic(const KvCacheTraffic& traffic);

  BundleManifest manifest_;
  LlmDecoderConfig config_;
  RasConfig ras_;
  std::unique_ptr<LlmEmbeddings> embeddings_;
  std::unique_ptr<onnx::OnnxSession> backbone_, head_;
  std::string head_input_, head_output_;
  int64_t kv_ = 0, head_dim_ = 0, hidden_ = 0, vocab_ = 0;
  std::unique_ptr<KvCache> cache_;      // rows [0, running) hold the running sequences
  onnx::ProviderBuffer hidden_states_;  // the backbone's allocator's: declared after it
  int64_t hidden_positions_ = 0;
  std::vector<Row> rows_;  // running; index = cache row
  std::deque<Queued> queue_;
  std::vector<float> logits_;
  LlmStepStats stats_;
  LogpHook hook_;
};

}  // namespace voxserve::engine::cosyvoice
