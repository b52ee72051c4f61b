// Short-time Fourier transform (power spectrum) and the padding torch.stft users apply.
#pragma once

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "audio/features/feature_matrix.h"

namespace voxserve::audio::features {

// torch.nn.functional.pad(mode="reflect"): mirrors around the first and last sample without
// repeating them. Each pad must be shorter than the signal (torch refuses otherwise, and so
// does this).
absl::StatusOr<std::vector<float>> ReflectPad(std::span<const float> samples, int left, int right);

// |STFT|^2 of `samples` as torch.stft(center=False, onesided=True) frames it: frame t covers
// samples [t * hop, t * hop + n_fft), multiplied by `window` (n_fft long), so there are
// 1 + (size - n_fft) / hop frames (none when the signal is shorter than n_fft). Returns
// [frames, n_fft / 2 + 1]. Center padding is the caller's (ReflectPad). Thread-safe: each call
// plans its own FFT.
absl::StatusOr<FeatureMatrix> PowerSpectrogram(std::span<const float> samples, int n_fft, int hop,
                                               std::span<const float> window);

}  // namespace voxserve::audio::features
