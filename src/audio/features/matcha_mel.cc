#include "audio/features/matcha_mel.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audio/features/mel_filterbank.h"
#include "audio/features/stft.h"
#include "audio/features/window.h"

namespace voxserve::audio::features {

absl::StatusOr<FeatureMatrix> MatchaMelSpectrogram(std::span<const float> samples,
                                                   const MatchaMelConfig& config) {
  if (config.hop <= 0 || config.n_fft < config.hop) {
    return absl::InvalidArgumentError(
        absl::StrCat("mel spectrogram needs 0 < hop <= n_fft, got hop ", config.hop, " and n_fft ",
                     config.n_fft));
  }
  const int pad = (config.n_fft - config.hop) / 2;
  auto padded = ReflectPad(samples, pad, pad);
  if (!padded.ok()) return padded.status();
  auto power = PowerSpectrogram(*padded, config.n_fft, config.hop,
                                HannWindow(config.n_fft, /*periodic=*/true));
  if (!power.ok()) return power.status();
  auto filters = SlaneyMelFilterbank(config.sample_rate, config.n_fft, config.n_mels, config.fmin,
                                     config.fmax);
  if (!filters.ok()) return filters.status();
  const std::vector<FilterSupport> supports = FilterSupports(*filters);

  FeatureMatrix mel(power->rows, config.n_mels);
  std::vector<float> magnitude(power->cols);
  for (std::size_t t = 0; t < power->rows; ++t) {
    std::span<const float> frame = power->row(t);
    // 1e-9 inside the root keeps its gradient finite in training; it is part of the feature.
    for (std::size_t k = 0; k < frame.size(); ++k) magnitude[k] = std::sqrt(frame[k] + 1e-9f);
    std::span<float> row = mel.row(t);
    ApplyFilterbank(*filters, supports, magnitude, row);
    for (float& value : row) value = std::log(std::max(value, 1e-5f));  // spectral_normalize_torch
  }
  return mel;
}

}  // namespace voxserve::audio::features
