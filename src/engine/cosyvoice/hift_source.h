// HiFT's source excitation for CosyVoice2 (24 kHz, so SineGen2: generator.py:192-317, picked by
// the sample rate at generator.py:418): f0 per mel frame -> 9 sines (f0 and 8 harmonics) at the
// sample rate, the voiced/unvoiced mask and additive noise, merged by SourceModuleHnNSF's
// Linear 9 -> 1 + tanh (generator.py:358-370) into the one-channel source the decoder reads.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::engine::cosyvoice {

// The random numbers SineGen draws: torch.randn_like(sine_waves) (generator.py:310), in that
// tensor's row-major order ([samples, harmonics + 1]). One object per request, one thread at a
// time. Tests inject their own; SeededSourceNoise is the default.
class SourceNoise {
 public:
  virtual ~SourceNoise() = default;
  // Fills `out` with standard normal values.
  virtual void FillNormal(std::span<float> out) = 0;
};

// Reproducible per seed on every platform: std::mt19937_64 (fully specified by the standard)
// and Box-Muller written here (std::normal_distribution's algorithm is the library's choice).
// Not PyTorch's stream: no test compares noise draws with upstream (they inject them). Same
// ownership and threading as SourceNoise.
class SeededSourceNoise final : public SourceNoise {
 public:
  explicit SeededSourceNoise(uint64_t seed) : engine_(seed) {}
  void FillNormal(std::span<float> out) override;

 private:
  std::mt19937_64 engine_;
};

// The manifest's hift.* numbers and the bundle's source Linear. Plain data.
struct SineSourceParams {
  int sample_rate = 24000;
  int upsample_scale = 480;  // samples per mel frame (prod(upsample_rates) * hop_len)
  int nb_harmonics = 8;      // sines = nb_harmonics + 1
  float sine_amp = 0.1f, noise_std = 0.003f, voiced_threshold = 10.0f;
  std::vector<float> linear_weight;  // [nb_harmonics + 1] (m_source.l_linear.weight [1, 9])
  float linear_bias = 0;
  // CosyVoice3's causal SineGen2 (causal=True, generator.py:222-226): the phase is upsampled by
  // repetition instead of linearly (:257), and a fixed table stands in for the random noise
  // (:312): [rows, nb_harmonics + 1] row-major, read from sample 0 of each call. Upstream's table
  // is torch.rand(1, 300 * 24000, 9); a bundle may keep fewer rows (export.py's cap), and past
  // them the rows are read again from the first. Null for CosyVoice2.
  std::shared_ptr<const std::vector<float>> noise_table;
};

// SineGen2's outputs for a whole utterance, owned by value.
struct SineExcitation {
  std::vector<float> sines;  // [samples, nb_harmonics + 1] row-major, noise included
  std::vector<float> uv;     // [samples]: 1 voiced (f0 > voiced_threshold), 0 unvoiced
};

// Immutable after Create; safe cross thread (the noise, the only state, is the caller's).
class SineSource {
 public:
  // InvalidArgument naming the bad parameter.
  static absl::StatusOr<SineSource> Create(SineSourceParams params);

  int sines() const { return params_.nb_harmonics + 1; }
  int upsample_scale() const { return params_.upsample_scale; }
  bool causal() const { return params_.noise_table != nullptr; }

  // f0 in Hz per mel frame (the f0 predictor's output, >= 0) -> sines and uv at the sample rate,
  // f0.size() * upsample_scale samples. InvalidArgument for no frames or a non-finite or
  // negative f0. With a noise_table (causal) `noise` is not read.
  absl::StatusOr<SineExcitation> Excite(std::span<const float> f0, SourceNoise& noise) const;
  // The causal source's samples of frames [first_frame, f0.size()) only, as Excite over all of
  // f0 gives them: the phase still accumulates from frame 0 (one value per frame), and the noise
  // table is read from sample first_frame * upsample_scale. FailedPrecondition without a noise
  // table (CosyVoice2's linear phase reads neighbouring frames).
  absl::StatusOr<SineExcitation> ExciteFrom(std::span<const float> f0, int64_t first_frame) const;
  // tanh(Linear(sines)): [samples, sines()] -> [samples].
  absl::StatusOr<std::vector<float>> Merge(std::span<const float> sines) const;
  // Merge(Excite(f0).sines): the source HiFT's decoder reads.
  absl::StatusOr<std::vector<float>> Source(std::span<const float> f0, SourceNoise& noise) const;

 private:
  absl::StatusOr<SineExcitation> Generate(std::span<const float> f0, int64_t first_frame,
                                          SourceNoise* noise) const;

 public:
 private:
  explicit SineSource(SineSourceParams params) : params_(std::move(params)) {}
  SineSourceParams params_;
};

// torch.nn.functional.interpolate(mode="linear", align_corners=False) of one row of `in` to
// `out_size` values, with the kernel's source-index scale `scale` as ATen computes it
// (UpSample.h compute_scales_value: float(1 / scale_factor) when a scale_factor is given,
// float(in) / out when a size is), in float32 as ATen's CPU kernel does. in must not be empty.
std::vector<float> InterpolateLinear(std::span<const float> in, int64_t out_size, float scale);

}  // namespace voxserve::engine::cosyvoice
