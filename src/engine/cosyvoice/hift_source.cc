#include "engine/cosyvoice/hift_source.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {

void SeededSourceNoise::FillNormal(std::span<float> out) {
  // 53 random bits -> (0, 1]; Box-Muller gives two independent normals per pair of draws.
  auto uniform = [this] { return (static_cast<double>(engine_() >> 11) + 1.0) * 0x1.0p-53; };
  for (size_t i = 0; i < out.size(); i += 2) {
    double radius = std::sqrt(-2.0 * std::log(uniform()));
    double angle = 2.0 * std::numbers::pi * uniform();
    out[i] = static_cast<float>(radius * std::cos(angle));
    if (i + 1 < out.size()) out[i + 1] = static_cast<float>(radius * std::sin(angle));
  }
}

std::vector<float> InterpolateLinear(std::span<const float> in, int64_t out_size, float scale) {
  const auto in_size = static_cast<int64_t>(in.size());
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(out_size, 0)));
  for (int64_t i = 0; i < out_size; ++i) {
    if (in_size ==
        out_size) {  // ATen copies when the sizes agree (compute_source_index_and_lambda)
      out[i] = in[i];
      continue;
    }
    // area_pixel_compute_source_index: scale * (dst + 0.5) - 0.5 in double, stored as float,
    // clamped at 0; then index0 = trunc, lambda1 = clamp(src - index0, 0, 1).
    auto src =
        static_cast<float>(static_cast<double>(scale) * (static_cast<double>(i) + 0.5) - 0.5);
    if (src < 0) src = 0;
    auto i0 = static_cast<int64_t>(src);
    i0 = std::min(i0, in_size - 1);
    int64_t i1 = i0 + (i0 < in_size - 1 ? 1 : 0);
    float l1 = std::clamp(src - static_cast<float>(i0), 0.0f, 1.0f);
    float l0 = 1.0f - l1;
    out[i] = in[i0] * l0 + in[i1] * l1;
  }
  return out;
}

namespace {

std::vector<float> NearestUpsample(std::span<const float> in, int64_t scale) {
  std::vector<float> out;
  out.reserve(in.size() * static_cast<size_t>(scale));
  for (float v : in) out.insert(out.end(), static_cast<size_t>(scale), v);
  return out;
}

}  // namespace

absl::StatusOr<SineSource> SineSource::Create(SineSourceParams p) {
  if (p.sample_rate < 1 || p.upsample_scale < 1 || p.nb_harmonics < 0) {
    return core::InvalidArgument(
        "HiFT source: sample_rate, upsample_scale must be >= 1 and "
        "nb_harmonics >= 0");
  }
  if (p.linear_weight.size() != static_cast<size_t>(p.nb_harmonics + 1)) {
    return core::InvalidArgument("HiFT source: the Linear has " +
                                 std::to_string(p.linear_weight.size()) + " weights, " +
                                 std::to_string(p.nb_harmonics + 1) + " sines need as many");
  }
  if (!(p.sine_amp >= 0) || !(p.noise_std >= 0) || !std::isfinite(p.voiced_threshold)) {
    return core::InvalidArgument("HiFT source: sine_amp and noise_std must be >= 0");
  }
  if (p.noise_table != nullptr &&
      (p.noise_table->empty() || p.noise_table->size() % (p.nb_harmonics + 1) != 0)) {
    return core::InvalidArgument("HiFT source: the noise table has " +
                                 std::to_string(p.noise_table->size()) + " values, not [rows, " +
                                 std::to_string(p.nb_harmonics + 1) + "]");
  }
  return SineSource(std::move(p));
}

absl::StatusOr<SineExcitation> SineSource::Excite(std::span<const float> f0,
                                                  SourceNoise& noise) const {
  return Generate(f0, 0, &noise);
}

absl::StatusOr<SineExcitation> SineSource::ExciteFrom(std::span<const float> f0,
                                                      int64_t first_frame) const {
  if (!causal()) {
    return absl::FailedPreconditionError("HiFT source: only the causal source starts mid-way");
  }
  if (first_frame < 0 || first_frame >= static_cast<int64_t>(f0.size())) {
    return core::InvalidArgument("HiFT source: first frame " + std::to_string(first_frame) +
                                 " is not one of the " + std::to_string(f0.size()));
  }
  return Generate(f0, first_frame, nullptr);
}

absl::StatusOr<SineExcitation> SineSource::Generate(std::span<const float> f0, int64_t first_frame,
                                                    SourceNoise* noise) const {
  if (f0.empty()) return core::InvalidArgument("HiFT source: no f0 frames");
  for (size_t d = 0; d < f0.size(); ++d) {
    if (!std::isfinite(f0[d]) || f0[d] < 0) {
      return core::InvalidArgument("HiFT source: f0 at frame " + std::to_string(d) + " is " +
                                   std::to_string(f0[d]) + " (want finite and >= 0 Hz)");
    }
  }
  const int dim = sines();
  const auto frames = static_cast<int64_t>(f0.size());
  const int64_t scale = params_.upsample_scale;
  const int64_t samples = (frames - first_frame) * scale;  // those returned

  // SineGen2._f02sine (generator.py:233-259) on f0 upsampled by repetition (f0_upsamp, nearest):
  // rad = (k f0 / sr) mod 1, the random initial phase added to sample 0 of harmonics 1..8, then a
  // linear downsample by 1/scale. That downsample reads samples scale*d + scale/2 - 1 and
  // scale*d + scale/2 of each frame (source index scale*(d + 0.5) - 0.5) with weights 1/2, both
  // inside frame d: it returns frame d's rad exactly and never reads sample 0 (for scale >= 3),
  // so the initial phase cannot reach the output and is not drawn here. Checked against the
  // goldens' sines (hift_source_test.cc). The causal source takes frame d's rad as it is (the
  // same value: the weights are exactly 1/2 while scale*(d + 0.5) - 0.5 is exact in float), so
  // that a window of frames costs its own samples, not all of them.
  std::vector<std::vector<float>> phase(static_cast<size_t>(dim));  // per harmonic, per frame
  for (int k = 0; k < dim; ++k) {
    std::vector<float> rad(static_cast<size_t>(frames));
    for (int64_t d = 0; d < frames; ++d) {
      float a = f0[d] * static_cast<float>(k + 1) / static_cast<float>(params_.sample_rate);
      rad[d] = a - std::floor(a);  // torch.remainder(a, 1) for a >= 0
    }
    if (!causal()) {
      std::vector<float> rad_up(static_cast<size_t>(frames * scale));
      for (int64_t d = 0; d < frames; ++d) std::fill_n(rad_up.begin() + d * scale, scale, rad[d]);
      rad = InterpolateLinear(rad_up, frames,
                              static_cast<float>(1.0 / (1.0 / static_cast<double>(scale))));
    }
    // torch.cumsum accumulates in double on the CPU (acc_type<float, false>), stores float; then
    // * 2 * pi (float), then * upsample_scale (generator.py:255-257).
    std::vector<float>& p = phase[k];
    p.resize(static_cast<size_t>(frames));
    double sum = 0;
    const auto pi = static_cast<float>(std::numbers::pi);
    for (int64_t d = 0; d < frames; ++d) {
      sum += rad[d];
      p[d] = static_cast<float>(sum) * 2.0f * pi * static_cast<float>(scale);
    }
  }
  SineExcitation out;
  out.sines.resize(static_cast<size_t>(samples * dim));
  out.uv.resize(static_cast<size_t>(samples));
  std::vector<float> normal(out.sines.size());
  if (causal()) {
    // The fixed table's rows from the first sample returned, again from its first row past its
    // end.
    const std::vector<float>& table = *params_.noise_table;
    size_t at = static_cast<size_t>(first_frame * scale * dim) % table.size();
    for (float& v : normal) {
      v = table[at];
      if (++at == table.size()) at = 0;
    }
  } else {
    noise->FillNormal(normal);
  }
  const float unvoiced_amp = static_cast<float>(static_cast<double>(params_.sine_amp) / 3.0);
  const auto up_scale = static_cast<float>(1.0 / static_cast<double>(scale));
  const int64_t first_sample = first_frame * scale;
  for (int k = 0; k < dim; ++k) {
    // Linear upsample x scale of the phase (CosyVoice2's non-causal SineGen2); by repetition in
    // the causal one (mode="nearest": sample s reads frame floor(s * float(1 / scale)), which
    // is s / scale for these sizes).
    std::vector<float> up =
        causal() ? NearestUpsample(std::span<const float>(phase[k]).subspan(first_frame), scale)
                 : InterpolateLinear(phase[k], samples, up_scale);
    for (int64_t s = 0; s < samples; ++s) {
      const float f = f0[(first_sample + s) / scale];
      const float uv = f > params_.voiced_threshold ? 1.0f : 0.0f;
      // sine_waves * uv + noise_amp * randn, noise_amp = uv * noise_std + (1 - uv) * amp / 3
      // (generator.py:300-316).
      const float noise_amp = uv * params_.noise_std + (1.0f - uv) * unvoiced_amp;
      const size_t at = static_cast<size_t>(s * dim + k);
      out.sines[at] = std::sin(up[s]) * params_.sine_amp * uv + noise_amp * normal[at];
      if (k == 0) out.uv[s] = uv;
    }
  }
  return out;
}

absl::StatusOr<std::vector<float>> SineSource::Merge(std::span<const float> sines) const {
  const auto dim = static_cast<size_t>(this->sines());
  if (sines.empty() || sines.size() % dim != 0) {
    return core::InvalidArgument("HiFT source: " + std::to_string(sines.size()) +
                                 " sine values is not [samples >= 1, " + std::to_string(dim) + "]");
  }
  std::vector<float> source(sines.size() / dim);
  for (size_t s = 0; s < source.size(); ++s) {
    float acc = 0;
    for (size_t k = 0; k < dim; ++k) acc += sines[s * dim + k] * params_.linear_weight[k];
    source[s] = std::tanh(acc + params_.linear_bias);
  }
  return source;
}

absl::StatusOr<std::vector<float>> SineSource::Source(std::span<const float> f0,
                                                      SourceNoise& noise) const {
  auto excitation = Excite(f0, noise);
  if (!excitation.ok()) return excitation.status();
  return Merge(excitation->sines);
}

}  // namespace voxserve::engine::cosyvoice
