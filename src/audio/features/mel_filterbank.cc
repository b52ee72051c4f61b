#include "audio/features/mel_filterbank.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"

namespace voxserve::audio::features {
namespace {

// Slaney's Auditory Toolbox scale as librosa.core.convert.hz_to_mel(htk=False) defines it:
// 200/3 Hz per mel up to 1 kHz (mel 15), then log steps of ln(6.4) / 27 per mel.
constexpr double kSlaneyHzPerMel = 200.0 / 3.0;
constexpr double kSlaneyLogStartHz = 1000.0;
constexpr double kSlaneyLogStartMel = kSlaneyLogStartHz / kSlaneyHzPerMel;
const double kSlaneyLogStep = std::log(6.4) / 27.0;

double HzToSlaneyMel(double hz) {
  if (hz < kSlaneyLogStartHz) return hz / kSlaneyHzPerMel;
  return kSlaneyLogStartMel + std::log(hz / kSlaneyLogStartHz) / kSlaneyLogStep;
}

double SlaneyMelToHz(double mel) {
  if (mel < kSlaneyLogStartMel) return mel * kSlaneyHzPerMel;
  return kSlaneyLogStartHz * std::exp(kSlaneyLogStep * (mel - kSlaneyLogStartMel));
}

double HzToKaldiMel(double hz) { return 1127.0 * std::log(1.0 + hz / 700.0); }

absl::Status CheckShape(int bands, int n_fft, double sample_rate) {
  if (bands <= 0 || n_fft < 2 || sample_rate <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("mel filterbank needs bands > 0, n_fft >= 2 and a positive sample rate, got ",
                     bands, ", ", n_fft, ", ", sample_rate));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FeatureMatrix> SlaneyMelFilterbank(int sample_rate, int n_fft, int n_mels,
                                                  double fmin, double fmax) {
  if (absl::Status status = CheckShape(n_mels, n_fft, sample_rate); !status.ok()) return status;
  if (fmin < 0 || fmax <= fmin || fmax > sample_rate / 2.0) {
    return absl::InvalidArgumentError(absl::StrCat("mel band [", fmin, ", ", fmax,
                                                   "] Hz must lie in [0, ", sample_rate / 2.0,
                                                   "] and be non-empty"));
  }
  const int bins = n_fft / 2 + 1;
  // librosa.mel_frequencies(n_mels + 2, fmin, fmax): edges equally spaced on the mel scale.
  std::vector<double> edges(n_mels + 2);
  const double mel_min = HzToSlaneyMel(fmin);
  const double mel_max = HzToSlaneyMel(fmax);
  for (int i = 0; i < n_mels + 2; ++i) {
    edges[i] = SlaneyMelToHz(mel_min + (mel_max - mel_min) * i / (n_mels + 1));
  }
  FeatureMatrix filters(n_mels, bins);
  for (int m = 0; m < n_mels; ++m) {
    const double lower_width = edges[m + 1] - edges[m];
    const double upper_width = edges[m + 2] - edges[m + 1];
    const double area_norm = 2.0 / (edges[m + 2] - edges[m]);
    for (int k = 0; k < bins; ++k) {
      const double hz = static_cast<double>(k) * sample_rate / n_fft;  // np.fft.rfftfreq
      const double rising = (hz - edges[m]) / lower_width;
      const double falling = (edges[m + 2] - hz) / upper_width;
      filters.at(m, k) = static_cast<float>(std::max(0.0, std::min(rising, falling)) * area_norm);
    }
  }
  return filters;
}

absl::StatusOr<FeatureMatrix> KaldiMelFilterbank(int num_bins, int padded_window_size,
                                                 double sample_rate, double low_freq,
                                                 double high_freq) {
  if (absl::Status status = CheckShape(num_bins, padded_window_size, sample_rate); !status.ok()) {
    return status;
  }
  const double nyquist = 0.5 * sample_rate;
  if (high_freq <= 0.0) high_freq += nyquist;
  if (low_freq < 0.0 || low_freq >= nyquist || high_freq <= low_freq || high_freq > nyquist) {
    return absl::InvalidArgumentError(absl::StrCat("Kaldi mel band [", low_freq, ", ", high_freq,
                                                   "] Hz must be non-empty and lie in [0, ",
                                                   nyquist, "]"));
  }
  const int fft_bins = padded_window_size / 2;
  const double bin_width = sample_rate / padded_window_size;
  const double mel_low = HzToKaldiMel(low_freq);
  const double mel_delta = (HzToKaldiMel(high_freq) - mel_low) / (num_bins + 1);
  FeatureMatrix filters(num_bins, fft_bins + 1);
  for (int m = 0; m < num_bins; ++m) {
    const double left = mel_low + m * mel_delta;
    const double center = mel_low + (m + 1) * mel_delta;
    const double right = mel_low + (m + 2) * mel_delta;
    for (int k = 0; k < fft_bins; ++k) {
      const double mel = HzToKaldiMel(bin_width * k);
      const double up = (mel - left) / (center - left);
      const double down = (right - mel) / (right - center);
      filters.at(m, k) = static_cast<float>(std::max(0.0, std::min(up, down)));
    }
  }
  return filters;
}

}  // namespace voxserve::audio::features

namespace voxserve::audio::features {

std::vector<FilterSupport> FilterSupports(const FeatureMatrix& filters) {
  std::vector<FilterSupport> supports(filters.rows);
  for (std::size_t m = 0; m < filters.rows; ++m) {
    std::span<const float> weights = filters.row(m);
    std::size_t first = 0;
    while (first < weights.size() && weights[first] == 0.0f) ++first;
    std::size_t last = weights.size();
    while (last > first && weights[last - 1] == 0.0f) --last;
    supports[m] = {first, last};
  }
  return supports;
}

void ApplyFilterbank(const FeatureMatrix& filters, std::span<const FilterSupport> supports,
                     std::span<const float> spectrum, std::span<float> out) {
  for (std::size_t m = 0; m < filters.rows; ++m) {
    const float* weights = filters.values.data() + m * filters.cols;
    double sum = 0.0;
    for (std::size_t k = supports[m].first; k < supports[m].last; ++k) {
      sum += static_cast<double>(weights[k]) * spectrum[k];
    }
    out[m] = static_cast<float>(sum);
  }
}

}  // namespace voxserve::audio::features
