// CosyVoice2's HiFT vocoder in C++ (HiFTGenerator.inference, cosyvoice/hifigan/generator.py:
// 558-570): mel [80, T] -> f0 (hift_f0.onnx) -> source (SineSource) -> source STFT (HiftStft)
// -> magnitude and phase (hift_decoder.onnx) -> iSTFT -> clamp to +-audio_limit. 480 samples
// of 24 kHz audio per mel frame.
#pragma once

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/bundle_manifest.h"
#include "engine/cosyvoice/hift_source.h"
#include "engine/cosyvoice/hift_stft.h"
#include "engine/onnx/onnx_session.h"
#include "engine/onnx/onnx_session_config.h"

namespace voxserve::engine::cosyvoice {

// A mel spectrogram [bins, frames] row-major (channels first, as the flow writes it). Borrowed.
struct MelView {
  std::span<const float> values;
  int64_t frames = 0;
};

// What one Vocode call returns, owned by value.
struct VocodedAudio {
  std::vector<float> audio;   // frames * 480 samples in [-audio_limit, audio_limit]
  std::vector<float> source;  // the source the decoder read, cache applied (the next cache)
};

// One mel of a VocodeBatch call and what its own Vocode would take. Borrowed for the call.
struct VocodeInput {
  MelView mel;
  std::span<const float> cache_source;
  SourceNoise* noise = nullptr;
};

// Owns the two sessions and the bundle's small tensors. Immutable after Create; safe cross
// thread (ORT's Run is thread-safe; the noise is per call). Blocking: call on a worker.
class HiftVocoder {
 public:
  // Opens the bundle's hift_f0 and hift_decoder graphs and reads hift_source_linear_weight,
  // _bias and hift_stft_window. Errors name the file or tensor.
  static absl::StatusOr<std::unique_ptr<HiftVocoder>> Create(
      const BundleManifest& manifest, const std::string& bundle_dir,
      const onnx::OnnxSessionConfig& session_config);

  int mel_bins() const { return mel_bins_; }
  int samples_per_frame() const { return source_.upsample_scale(); }
  // A mel longer than this is refused: the flow's fixed noise (rand_noise [1, 80, 15000],
  // flow_matching.py:200) bounds any mel CosyVoice2 makes to 15000 frames (5 minutes).
  static constexpr int64_t kMaxFrames = 15000;

  // The full vocoder. `cache_source` (empty, or at most frames * 480 samples) replaces the first
  // samples of the source, as upstream's streaming loop passes the previous chunk's last 3840
  // source samples (generator.py:565-567, model.py:305-317). InvalidArgument for a mel that is
  // not [mel_bins, 1..kMaxFrames] of finite values or a cache longer than the source.
  absl::StatusOr<VocodedAudio> Vocode(MelView mel, std::span<const float> cache_source,
                                      SourceNoise& noise) const;
  // The same on a mel in the provider's memory, `mel` [1, mel_bins, frames] (the flow's
  // ProviderMel): both graphs read it where it is; only f0 comes to the host (the source is made
  // there) and the source STFT goes in. Its values are not scanned for NaNs (they cannot be read
  // on the device); the flow's checked inputs make a finite mel.
  absl::StatusOr<VocodedAudio> VocodeOnProvider(const onnx::TensorView& mel,
                                                std::span<const float> cache_source,
                                                SourceNoise& noise) const;
  // Several mels, each as its own Vocode would (the same audio, its own status, in input
  // order). Mels of equal length share one call of each graph when both take any number of
  // rows (batches_rows(): the bundles export.py writes); the source, its STFT and the iSTFT stay
  // per mel on the host. Streams on one hop schedule vocode equal lengths after their first hop.
  std::vector<absl::StatusOr<VocodedAudio>> VocodeBatch(std::span<const VocodeInput> inputs) const;
  // CosyVoice3's CausalHiFTGenerator: hift_f0 takes (mel, context), the manifest's
  // hift.conv_pre_look_right is > 0 and the bundle has the tensor hift_noise_table (the source is
  // then SineSource's causal one).
  bool causal() const { return !f0_context_.empty(); }
  // CausalHiFTGenerator.inference (generator.py:714-729) on a whole mel. finalize: its audio,
  // frames * 480 samples. Otherwise the mel's last 3 frames are only the f0 predictor's right
  // context and the 4 before them conv_pre's, and the last 480 samples are dropped:
  // (frames - 8) * 480 samples, none for 8 frames or fewer (too short to emit yet).
  // FailedPrecondition on a CosyVoice2 vocoder; InvalidArgument as Vocode.
  absl::StatusOr<std::vector<float>> VocodeCausal(MelView mel, bool finalize) const;
  // Its f0 (Hz per frame): finalize, for every frame with zeros as the predictor's right
  // context (its own padding); otherwise for the frames before the last 3, those as context.
  absl::StatusOr<std::vector<float>> CausalF0(MelView mel, bool finalize) const;
  // VocodeCausal after the source: CausalHiFTGenerator.decode (generator.py:672-705) of the
  // mel's first `decoded` frames, the frames after them (conv_pre's lookahead, read as zeros past
  // the mel's end) and `source` (its STFT's columns past the decoded frames dropped). Returns
  // decoded * 480 samples, less the last frame's when !finalize. Run on a window of a longer mel
  // it gives that window's part of the whole mel's audio except near the window's start, where
  // the convolutions lack their left context (CausalHiftStream skips kStreamLeftContextFrames).
  absl::StatusOr<std::vector<float>> DecodeCausal(MelView mel, std::span<const float> source,
                                                  int64_t decoded, bool finalize) const;
  int64_t f0_lookahead() const { return f0_lookahead_; }
  int64_t conv_pre_lookahead() const { return conv_pre_lookahead_; }
  // Whether both graphs have a dynamic rows axis (older bundles: one row, vocoded in turn).
  bool batches_rows() const { return batches_rows_; }
  // Decoder graph runs so far, all calls together (each serves one or more mels).
  int64_t decoder_calls() const { return decoder_calls_.load(std::memory_order_relaxed); }

  // The pieces, for tests and verify-bundle. F0: Hz per frame.
  absl::StatusOr<std::vector<float>> F0(MelView mel) const;
  const SineSource& sine_source() const { return source_; }
  const HiftStft& stft() const { return stft_; }
  // HiFTGenerator.decode (generator.py:507-539): source [frames * 480] -> audio.
  absl::StatusOr<std::vector<float>> Decode(MelView mel, std::span<const float> source) const;

 private:
  HiftVocoder(SineSource source, HiftStft stft)
      : source_(std::move(source)), stft_(std::move(stft)) {}
  absl::Status CheckMel(MelView mel) const;
  absl::Status CheckFrames(int64_t frames) const;
  // The graphs on a mel view [rows, mel_bins, frames] (host or provider); one source, cache
  // and noise per row. F0Of: [rows * frames]; DecodeOf: each row's audio.
  absl::StatusOr<std::vector<float>> F0Of(const onnx::TensorView& mel, int64_t frames) const;
  absl::StatusOr<std::vector<std::vector<float>>> DecodeOf(
      const onnx::TensorView& mel, int64_t frames,
      std::span<const std::vector<float>> sources) const;
  absl::StatusOr<std::vector<VocodedAudio>> VocodeOf(const onnx::TensorView& mel, int64_t frames,
                                                     std::span<const VocodeInput> rows) const;

  std::unique_ptr<onnx::OnnxSession> f0_;
  std::unique_ptr<onnx::OnnxSession> decoder_;
  SineSource source_;
  HiftStft stft_;
  int mel_bins_ = 80;
  float audio_limit_ = 0.99f;
  bool batches_rows_ = false;
  mutable std::atomic<int64_t> decoder_calls_{0};
  std::string f0_input_, f0_output_, decoder_mel_, decoder_source_, decoder_magnitude_,
      decoder_phase_;
  std::string f0_context_;          // causal only: the f0 graph's second input
  int64_t f0_lookahead_ = 0;        // causal: the frames of that context (3)
  int64_t conv_pre_lookahead_ = 0;  // causal: the manifest's hift.conv_pre_look_right (4)
};

// Frames [first, first + count) of a mel [bins, frames] row-major, zeros past its end:
// [bins, count] row-major (the causal vocoder's windows and right contexts).
std::vector<float> MelFrames(MelView mel, int bins, int64_t first, int64_t count);

// Speed change for non-streaming synthesis (CosyVoice2Model.token2wav, cli/model.py:319-321):
// F.interpolate(mel, size=int(frames / speed), mode="linear") over time. InvalidArgument for a
// speed that is not finite and > 0, or one that leaves no frame or more than kMaxFrames.
// Returns the new mel [bins, new_frames] row-major; *new_frames receives the count.
absl::StatusOr<std::vector<float>> ChangeMelSpeed(MelView mel, int bins, double speed,
                                                  int64_t* new_frames);

}  // namespace voxserve::engine::cosyvoice
