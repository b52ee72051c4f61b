// CosyVoice2's flow stage (issue 13 item 3): speech tokens -> mel [80, T]. The flow encoder graph
// gives mu and the projected speaker vector; then 10 Euler steps on the cosine schedule from the
// bundle's fixed noise, each a classifier-free-guidance pair of estimator rows (conditioned,
// unconditioned), as upstream's CausalMaskedDiffWithXvec.inference and CausalConditionalCFM do
// (cosyvoice/flow/flow.py:236-281, cosyvoice/flow/flow_matching.py:71-124, :196-227). This is
// the non-streaming, finalize=True path (Run); RunPrefix adds upstream's streaming hops over a
// growing prefix, through the bundle's chunk-causal flow_encoder_stream graph when it has one.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/flow_buffers.h"
#include "engine/onnx/onnx_session.h"
#include "engine/onnx/onnx_session_config.h"

namespace voxserve::engine::cosyvoice {

// One request's flow input. Views, owned by the caller, valid for the duration of the call; the
// layouts are those of a CosyVoice2 VoiceProfile (engine/voice_cloning.h), so a stored profile's
// tensors can be passed as they are.
struct FlowRequest {
  std::span<const int32_t> tokens;         // the new speech tokens (from the LLM), >= 1
  std::span<const int32_t> prompt_tokens;  // the prompt's speech tokens (may be empty)
  std::span<const float> prompt_mel;       // [token_mel_ratio * prompt_tokens, 80], frame-major
  std::span<const float> embedding;        // the CAM++ x-vector [192] (not normalised)
};

// A mel spectrogram [bins, frames], row-major (bin-major: the layout HiFT's graphs take).
struct FlowMel {
  int bins = 0;
  int frames = 0;
  std::vector<float> values;
};

// A mel left in the provider's memory, [1, bins, frames] bin-major, for HiFT to read where it is
// (CUDA device memory with the CUDA provider: no copy to the host between the stages). Owned by
// value; must not outlive the FlowMatcher that made it (its memory is the estimator session's).
struct ProviderMel {
  onnx::ProviderBuffer values;
  int bins = 0;
  int frames = 0;
  onnx::TensorView View() const {
    return values.View(onnx::ElementType::kFloat, {1, bins, frames});
  }
};

// What the encoder makes of a request, before the Euler loop. Owned by value.
struct FlowConditioning {
  int frames = 0;           // T = token_mel_ratio * (prompt + new tokens)
  int prompt_frames = 0;    // the first frames, which the prompt mel conditions
  std::vector<float> mu;    // [80, T]
  std::vector<float> spks;  // [80]: L2-normalised x-vector through the 192 -> 80 projection
  // [80, T]: the prompt mel (transposed) in the prompt frames, zeros after
  std::vector<float> cond;
};

// Owns the encoder and estimator sessions and the fixed noise. Immutable after Create; Run and
// the other methods are const and safe cross thread (each call owns its buffers; ORT's Run is
// thread-safe). Blocking (ten estimator runs): call on an engine worker.
class FlowMatcher {
 public:
  // Opens the bundle's flow_encoder and flow_estimator graphs and reads `rand_noise`. Errors name
  // the graph, input or tensor that does not fit. length_bucket_frames > 0 (with an estimator
  // whose batch axis is dynamic): requests whose lengths round up to the same multiple of it
  // share estimator calls, each padded to the group's longest with its mask 0 after its own
  // frames (the estimator's convolutions are causal and its attention masked, so a request's
  // frames come out as alone, within float rounding); 0 groups equal lengths only.
  static absl::StatusOr<std::unique_ptr<FlowMatcher>> Create(
      const BundleManifest& manifest, const std::string& bundle_dir,
      const onnx::OnnxSessionConfig& session_config, int length_bucket_frames = 0);

  // The generated mel, without the prompt frames: [80, token_mel_ratio * tokens.size()].
  // InvalidArgument for a request whose shapes or token ids do not fit (the message names the
  // field and what it should be); OutOfRange past the encoder's max_tokens or the noise's length
  // (15000 frames, 300 s of mel).
  absl::StatusOr<FlowMel> Run(const FlowRequest& request) const;

  // One streaming hop of upstream's token2wav (cosyvoice/cli/model.py:292-303, scheduled by
  // :343-375): `request.tokens` are the piece's first N tokens, and the result is the generated
  // mel from frame token_mel_ratio * token_offset on. Non-final hops (finalize false) run the
  // encoder as flow.inference(streaming=True, finalize=False) does (flow.py:257-261): the last
  // pre_lookahead_len tokens are the lookahead layer's context, the attention chunk-masked, and
  // the mel ends at token_mel_ratio * (N - pre_lookahead_len). The final hop is Run's path
  // (token2wav's finalize call passes streaming=False). The estimator has full attention in both
  // (the exported graph has no `streaming` input, reference/model-interfaces.md 3.5), and the
  // noise is the same prefix of rand_noise every time. Without the stream graph a non-final hop
  // falls back to Run's encoder over all N tokens with the lookahead frames dropped (an
  // approximation: earlier frames move slightly in later hops).
  // With the optional chunk-masked estimator (flow_estimator_stream: CosyVoice3's DiT) the
  // non-final hops' Euler loops run it instead, as CosyVoice3Model.token2wav does with
  // streaming=True; the final hop attends fully (tts() passes it no `stream`, model.py:367-373).
  // InvalidArgument as Run, and for a non-final hop of no more than pre_lookahead_len tokens or an
  // offset at or past the end.
  absl::StatusOr<FlowMel> RunPrefix(const FlowRequest& request, size_t token_offset,
                                    bool finalize) const;
  // Several streams' hops at once: hops whose Euler loops run over the same frames (HopFrames)
  // share estimator calls when the estimator's batch axis is dynamic, as RunBatch's requests do;
  // with many streams of one voice on one schedule, the streams at the same hop are of one
  // length. One result per hop, in order, each RunPrefix's; a bad hop fails alone.
  struct Hop {
    FlowRequest request;
    size_t token_offset = 0;
    bool finalize = false;
  };
  std::vector<absl::StatusOr<FlowMel>> RunPrefixBatch(std::span<const Hop> hops) const;
  // The frames a hop's Euler loop runs over: token_mel_ratio x (prompt + tokens), less the
  // lookahead of a non-final hop through the stream encoder.
  int HopFrames(const Hop& hop) const;
  // The frames a whole piece's Euler loop runs over: token_mel_ratio x (prompt + tokens).
  int PieceFrames(const FlowRequest& request) const {
    return token_mel_ratio_ *
           static_cast<int>(request.prompt_tokens.size() + request.tokens.size());
  }
  // Runs of `frames` share estimator calls with runs of the same key (RunBatch, RunPrefixBatch):
  // the length itself, or its length bucket (Create's length_bucket_frames) with a dynamic batch.
  int ShareKey(int frames) const {
    return length_bucket_ > 0 ? (frames + length_bucket_ - 1) / length_bucket_ : frames;
  }
  // Whether non-final RunPrefix hops use upstream's chunk-causal encoder (the bundle has the
  // optional flow_encoder_stream graph) rather than the approximation.
  bool has_stream_encoder() const { return stream_encoder_ != nullptr; }
  // Whether the hops' Euler loops run the optional chunk-masked estimator (flow_estimator_stream,
  // CosyVoice3's DiT with streaming=True); without it they attend fully, as upstream's
  // ONNX/TensorRT estimator does.
  bool has_stream_estimator() const { return stream_estimator_ != nullptr; }

  // Several requests. Each row pair of the CFG batch is independent, so requests of the same
  // length share estimator calls when the estimator's batch axis is dynamic; upstream's export
  // (cosyvoice/bin/export_onnx.py:80-86) fixes it at 2, and then requests run one after another.
  // One result per request, in order; a bad request fails alone.
  std::vector<absl::StatusOr<FlowMel>> RunBatch(std::span<const FlowRequest> requests) const;
  // RunBatch's mels left in the provider's memory (the vocoder's path: HiFT reads them there).
  std::vector<absl::StatusOr<ProviderMel>> RunBatchOnProvider(
      std::span<const FlowRequest> requests) const;
  // A provider mel's values on the host (FlowMel), for the stages that work on the host
  // (ChangeMelSpeed, HiftStream).
  absl::StatusOr<FlowMel> Download(const ProviderMel& mel) const;

  // The pieces of Run, public for the stage tests and verify-bundle. Encode checks the request as
  // Run does; EstimatorStep runs one CFG pair (row 0 conditioned, row 1 zeros) at flow time `t`
  // and returns the estimator's raw output [2, 80, T] (before the guidance combination).
  // EncodeStream is the non-final hop's encoder (flow_encoder_stream; FailedPrecondition
  // without it): T = token_mel_ratio * (prompt + new - pre_lookahead_len).
  absl::StatusOr<FlowConditioning> Encode(const FlowRequest& request) const;
  absl::StatusOr<FlowConditioning> EncodeStream(const FlowRequest& request) const;
  // chunk_masked: through flow_estimator_stream (FailedPrecondition without it).
  absl::StatusOr<std::vector<float>> EstimatorStep(const FlowConditioning& conditioning,
                                                   std::span<const float> x, float t,
                                                   bool chunk_masked = false) const;

  // Rows the estimator takes per call: 2 (one CFG pair) for upstream's graph, 0 when dynamic.
  int64_t estimator_batch() const { return estimator_batch_; }
  int mel_bins() const { return mel_bins_; }
  int max_frames() const { return noise_frames_; }
  // Estimator runs so far, all calls together (each serves one or more CFG pairs).
  int64_t estimator_calls() const { return estimator_calls_.load(std::memory_order_relaxed); }
  // Prompt + new tokens the encoder graph takes (its metadata "max_tokens"; 0 = not recorded).
  int64_t max_tokens() const { return max_tokens_; }

 private:
  struct Prepared;  // a checked request, ready for the encoder (flow_matcher.cc)
  FlowMatcher() = default;
  // Checks the request (the errors Run documents) and builds the encoder's input and cond.
  absl::StatusOr<Prepared> Prepare(const FlowRequest& request, bool stream) const;
  // The (stream) encoder on a prepared request, its outputs written into the views (host or
  // provider): mu [1, bins, frames], spks [1, bins].
  absl::Status RunEncoder(const Prepared& p, const onnx::TensorView& mu,
                          const onnx::TensorView& spks) const;
  // Encoder and the Euler loop for requests of one length bucket, in one batch of provider buffers
  // as long as the longest: pair k is group[k], its mel in the first group[k]->frames frames.
  absl::StatusOr<FlowBatch> Solve(std::span<const Prepared* const> group) const;
  // Solves every request (grouped by length as RunBatch says) and hands each solved pair to
  // `take` (request index, batch, pair, first and end frame of its mel); errors[i] is request
  // i's outcome.
  using SliceSink = std::function<absl::Status(size_t, const FlowBatch&, int, int, int)>;
  // Solves the prepared requests (null: failed already, errors[i] says why) grouped by length
  // (or length bucket), a group per estimator call when its batch axis is dynamic (one request
  // each otherwise), and
  // hands each solved pair to `take` (request index, batch, pair); errors[i] is its outcome.
  using PairSink = std::function<absl::Status(size_t, const FlowBatch&, int)>;
  void SolveGrouped(std::span<const Prepared* const> prepared, const PairSink& take,
                    std::vector<absl::Status>& errors) const;
  void SolveAll(std::span<const FlowRequest> requests, const SliceSink& take,
                std::vector<absl::Status>& errors) const;
  absl::Status SliceToHost(const FlowBatch& batch, int pair, int first, int end,
                           FlowMel& mel) const;
  absl::StatusOr<FlowConditioning> EncodeWith(const FlowRequest& request, bool stream) const;
  // rand_noise's first `frames` frames, [80, frames] (flow_matching.py:222).
  std::vector<float> Noise(int frames) const;
  // Frames [first, end) of every bin of `x` [80, frames].
  FlowMel Slice(const std::vector<float>& x, int frames, int first, int end) const;

  std::unique_ptr<onnx::OnnxSession> encoder_;
  std::unique_ptr<onnx::OnnxSession> estimator_;
  std::string encoder_token_, encoder_embedding_, encoder_mu_, encoder_spks_;
  bool encoder_token_int32_ = false;
  // Optional (older bundles lack it); its names by position as for the encoder.
  std::unique_ptr<onnx::OnnxSession> stream_encoder_;
  std::string stream_token_, stream_context_, stream_embedding_, stream_mu_, stream_spks_;
  bool stream_token_int32_ = false, stream_context_int32_ = false;
  int pre_lookahead_len_ = 3;
  std::unique_ptr<onnx::OnnxSession> stream_estimator_;  // optional; its output is estimator_out_
  std::string estimator_out_;
  std::unique_ptr<FlowGlue> glue_;  // the graphs between estimator calls (flow_buffers.h)
  std::vector<float> noise_;        // rand_noise [80, noise_frames_]
  int noise_frames_ = 0;
  int mel_bins_ = 80;
  int embedding_dim_ = 192;
  int token_mel_ratio_ = 2;
  int64_t speech_token_size_ = 6561;
  int n_timesteps_ = 10;
  float cfg_rate_ = 0.7f;
  int64_t estimator_batch_ = 2;
  int length_bucket_ = 0;  // frames; see Create (0 with a fixed batch axis)
  int64_t max_tokens_ = 0;
  mutable std::atomic<int64_t> estimator_calls_{0};
};

}  // namespace voxserve::engine::cosyvoice
