// CosyVoice 2 as an engine (`engine: cosyvoice`, options.path = a bundle directory, see
// docs/cosyvoice-bundle.md): the bundle is loaded and checked (a bad bundle fails the model's
// load with check-model's message), voice cloning runs the ONNX frontend, and synthesis with a
// cloned voice is a streaming engine whose runner (cosyvoice_runner.h) steps the LLM of all
// active segments together while the engine's vocoder pool runs flow and HiFT per finished piece
// (docs/cosyvoice-generation.md, "The engine").
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/flow_matcher.h"
#include "engine/cosyvoice/hift_vocoder.h"
#include "engine/cosyvoice/llm_step_graph.h"
#include "engine/cosyvoice/prompt_encoder.h"
#include "engine/cosyvoice/text_frontend.h"
#include "engine/cosyvoice/vocoder_pool.h"
#include "engine/onnx/onnx_session_config.h"
#include "engine/streaming_engine.h"

namespace voxserve::engine::cosyvoice {

// YAML models[].options of an `engine: cosyvoice` model.
struct CosyVoiceEngineConfig {
  std::string model_id;
  std::string bundle_path;    // options.path (required)
  std::string default_voice;  // ignored: the engine has no voices of its own
  // options.max_active: segments one instance decodes together (rows of its LLM's KV cache).
  int max_active = 4;
  // options.llm_capacity: KV cache slots per row. A piece needs prompt (1 + transcript + text +
  // 1 + prompt speech tokens) + max_len - 1 slots, max_len = 20 x its text tokens (llm.py:498):
  // a 10 s prompt (250 tokens) and a 60-token sentence take about 1500.
  int llm_capacity = 2048;
  // options.max_prefills_per_step: newcomers prefilled per LLM step (1..max_active). Each one's
  // prefill stalls the running rows for that step: 1 bounds a running stream's longest gap to one
  // decode step plus one prompt's prefill; more admit a burst of newcomers faster.
  int max_prefills_per_step = 1;
  // options.streaming: upstream's streaming schedule (audio every 25, 50, 100, 100... tokens)
  // over the non-streaming flow graph; off: one chunk per normalized piece
  // (docs/cosyvoice-generation.md, "The engine").
  bool streaming = false;
  // options.stream_first_hop, stream_max_hop (tokens; 0 = upstream's): the streaming schedule.
  // Upstream's first hop is token_hop_len (25) padded so that prompt + hop is whole hops, later
  // hops x stream_scale_factor up to token_max_hop_len (100). A first hop set here is taken as
  // it is (no padding), and the hops grow from it: 15 gives 15, 30, 60, 100... (upstream's Triton
  // runtime starts at 15 too). Sooner first audio, at a cost in the audio measured in
  // docs/cosyvoice-generation.md ("The hop schedule").
  int stream_first_hop = 0;
  int stream_max_hop = 0;
  // options.flow_length_bucket (mel frames; 0 = off): flow runs waiting together whose lengths
  // round up to one multiple of it share the estimator's calls, padded and masked
  // (FlowMatcher::Create). Only with an estimator whose batch axis is dynamic.
  int flow_length_bucket = 0;
  // options.vocoder_threads: threads running flow + HiFT for all of this model's instances, off
  // their LLM step threads. Default 1: each flow / HiFT run already spreads over every core
  // (ONNX Runtime's intra-op default), and a second thread only contended for them in our
  // measurements (docs/cosyvoice-generation.md, "The engine", Figures); more pay with
  // intra_op_threads set to a share of the cores.
  int vocoder_threads = 1;
  // options.warmup_synthesis: auto | on | off. Whether Warmup speaks its texts through every
  // stage (auto: with execution_provider cuda, where first runs load kernels and search cuDNN's
  // algorithms) or only clones its synthetic voice (the prompt encoders).
  std::string warmup_synthesis = "auto";
  // options.llm_precision, llm_cuda_graphs, llm_attention: how the LLM's step graph runs
  // (LlmRuntimeOptions: fp16 and CUDA graphs with the CUDA provider by default).
  LlmRuntimeOptions llm_runtime;
  onnx::OnnxSessionConfig session;

  absl::Status Set(const std::string& key, const std::string& value);
  absl::Status Validate() const;
};

// The features of a prompt recording that the ONNX graphs take (computed by audio/features:
// KaldiFbank, WhisperLogMel, CosyVoicePromptMel). Owned by value.
struct PromptFeatures {
  std::vector<float> fbank;        // [frames, 80], mean-normalised, 16 kHz
  std::vector<float> whisper_mel;  // [128, frames], 16 kHz
  std::vector<float> prompt_mel;   // [frames, 80], 24 kHz, 50 frames per second
  double seconds = 0;
};

// Immutable after Create; safe cross thread (the sessions are). Each runner owns its own LLM
// (KV cache); flow, HiFT and the text frontend are shared, read-only; the vocoder pool, shared
// by the runners, runs their flow + HiFT jobs.
// What the last Warmup ran, for its log line and tests.
struct WarmupReport {
  int segments = 0;          // spoken by max_active at once, per warm-up text
  double audio_seconds = 0;  // what they made
  double milliseconds = 0;   // the whole warm-up, the prompt's cloning included
};

class CosyVoiceEngine final : public StreamingEngine, public VoiceCloner {
 public:
  static absl::StatusOr<std::unique_ptr<CosyVoiceEngine>> Create(
      const CosyVoiceEngineConfig& config);

  const ModelInfo& info() const override { return info_; }
  // Cloned voices live in the voice store; the engine lists none of its own.
  bool AcceptsVoice(std::string_view voice_id) const override;
  // Runs every stage before the model counts as ready, so the first request pays none of ONNX
  // Runtime's first-run costs (arenas growing; on CUDA, kernel loading and cuDNN's algorithm
  // searches): a voice cloned from a synthetic prompt (warmup_prompt.h: the prompt encoders and
  // features), then, with warmup_synthesis (auto: on CUDA), each text spoken by max_active
  // segments at once through a runner of its own (prefill, the batched decode, a flow batch,
  // HiFT; streaming: the hops). No texts (`warmup: []`): nothing runs. An error names the stage
  // that failed: the model does not load.
  absl::Status Warmup(std::span<const std::string> texts) override;
  // Warmup's first part alone: a voice cloned from the synthetic prompt.
  absl::Status WarmupCloning() override;
  const WarmupReport& last_warmup() const { return last_warmup_; }
  VoiceCloner* voice_cloner() override { return this; }
  int max_active() const override { return config_.max_active; }
  // A runner with its own LlmDecoder (max_active rows of llm_capacity slots). Safe cross thread.
  absl::StatusOr<std::unique_ptr<StreamRunner>> CreateRunner() override;

  // Decodes and checks the recording (cosyvoice/prompt_audio.h: formats, >= 16 kHz, 0.1-30 s,
  // not silent), computes its features, runs the ONNX half (ProfileFromFeatures) and adds the
  // transcript as upstream's zero-shot frontend does: normalized whole (text_normalize,
  // split=False), then tokenized ("transcript_tokens", int32 [M]; [0] for an empty transcript,
  // which only cross-lingual synthesis can use). Errors as VoiceCloner documents.
  absl::StatusOr<VoiceProfile> CloneVoice(const VoicePrompt& prompt) override;

  // The ONNX half of CloneVoice, on features already computed: speaker embedding, speech
  // tokens, and CosyVoice2's 2:1 alignment of prompt mel and tokens (frontend.py,
  // frontend_zero_shot: token_len = min(mel_frames / 2, tokens)). Transcript tokens are added by
  // the text frontend (see CloneVoice).
  absl::StatusOr<VoiceProfile> ProfileFromFeatures(const PromptFeatures& features) const;

  const BundleManifest& manifest() const { return manifest_; }
  // The shared flow and HiFT stages (tests and benchmarks read their estimator_calls() and
  // decoder_calls()).
  const FlowMatcher& flow() const { return *flow_; }
  const HiftVocoder& hift() const { return *hift_; }

 private:
  CosyVoiceEngine() = default;
  // stream_first_hop / stream_max_hop against the bundle's streaming constants.
  absl::Status CheckHopSchedule() const;
  // The voice Warmup speaks with, cloned from warmup_prompt.h's synthetic prompt.
  absl::StatusOr<std::shared_ptr<const VoiceProfile>> CloneWarmupVoice();

  CosyVoiceEngineConfig config_;
  BundleManifest manifest_;
  std::unique_ptr<PromptEncoder> prompt_encoder_;
  std::unique_ptr<text::Qwen2Tokenizer>
      tokenizer_;                                // the bundle's tokenizer/ + CosyVoice2's specials
  std::unique_ptr<TextFrontend> text_frontend_;  // uses tokenizer_ (split lengths)
  std::unique_ptr<FlowMatcher> flow_;
  std::unique_ptr<HiftVocoder> hift_;
  ModelInfo info_;
  WarmupReport last_warmup_;  // written by Warmup, before the model serves
  // Last: destroyed first, so a job still running finishes before the stages it reads go.
  std::unique_ptr<VocoderPool> vocoder_;
};

}  // namespace voxserve::engine::cosyvoice
