// Triangular mel filterbanks: librosa's Slaney filters and Kaldi's HTK-scale filters.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "audio/features/feature_matrix.h"

namespace voxserve::audio::features {

// librosa.filters.mel(sr, n_fft, n_mels, fmin, fmax, htk=False, norm="slaney") (the same as
// torchaudio.functional.melscale_fbanks(norm="slaney", mel_scale="slaney"), transposed):
// Slaney's mel scale (linear below 1 kHz, logarithmic above), triangles between n_mels + 2
// equally spaced mel points, each scaled by 2 / (its width in Hz) so that it has unit area.
// Returns [n_mels, n_fft / 2 + 1]; computed in double, stored as float like librosa's default.
absl::StatusOr<FeatureMatrix> SlaneyMelFilterbank(int sample_rate, int n_fft, int n_mels,
                                                  double fmin, double fmax);

// torchaudio.compliance.kaldi.get_mel_banks without VTLN warping (Kaldi's MelBanks): mel =
// 1127 ln(1 + f / 700), num_bins triangles between low_freq and high_freq (high_freq <= 0
// counts down from Nyquist) over the FFT bin centres k * sample_rate / padded_window_size, no
// area normalization. Returns [num_bins, padded_window_size / 2 + 1]: the Nyquist column is
// zero, as torchaudio pads it.
absl::StatusOr<FeatureMatrix> KaldiMelFilterbank(int num_bins, int padded_window_size,
                                                 double sample_rate, double low_freq,
                                                 double high_freq);

}  // namespace voxserve::audio::features

namespace voxserve::audio::features {

// Where each filter (row) is non-zero: [first, last) columns. A triangle covers a few bins of
// hundreds, so applying only its support saves most of the work.
struct FilterSupport {
  std::size_t first = 0;
  std::size_t last = 0;
};
std::vector<FilterSupport> FilterSupports(const FeatureMatrix& filters);

// out[m] = sum_k filters(m, k) * spectrum[k] over filter m's support, accumulated in double.
// spectrum.size() must equal filters.cols, out.size() filters.rows, and `supports` must be
// FilterSupports(filters).
void ApplyFilterbank(const FeatureMatrix& filters, std::span<const FilterSupport> supports,
                     std::span<const float> spectrum, std::span<float> out);

}  // namespace voxserve::audio::features
