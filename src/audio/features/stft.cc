#include "audio/features/stft.h"

#include "absl/strings/str_cat.h"
#include "audio/features/real_fft.h"

namespace voxserve::audio::features {

absl::StatusOr<std::vector<float>> ReflectPad(std::span<const float> samples, int left, int right) {
  const auto size = static_cast<long>(samples.size());
  if (left < 0 || right < 0 || left >= size || right >= size) {
    return absl::InvalidArgumentError(absl::StrCat("reflect padding of ", left, " and ", right,
                                                   " samples needs a signal longer than both, got ",
                                                   size, " samples"));
  }
  std::vector<float> padded;
  padded.reserve(samples.size() + left + right);
  for (int i = left; i >= 1; --i) padded.push_back(samples[i]);
  padded.insert(padded.end(), samples.begin(), samples.end());
  for (int i = 1; i <= right; ++i) padded.push_back(samples[size - 1 - i]);
  return padded;
}

absl::StatusOr<FeatureMatrix> PowerSpectrogram(std::span<const float> samples, int n_fft, int hop,
                                               std::span<const float> window) {
  if (hop <= 0)
    return absl::InvalidArgumentError(absl::StrCat("STFT hop must be positive, got ", hop));
  if (static_cast<int>(window.size()) != n_fft) {
    return absl::InvalidArgumentError(
        absl::StrCat("STFT window has ", window.size(), " points, n_fft is ", n_fft));
  }
  auto fft = RealFft::Create(n_fft);
  if (!fft.ok()) return fft.status();
  std::size_t frames = 0;
  if (samples.size() >= static_cast<std::size_t>(n_fft)) {
    frames = 1 + (samples.size() - n_fft) / hop;
  }
  FeatureMatrix power(frames, (*fft)->bins());
  std::span<float> input = (*fft)->input();
  for (std::size_t t = 0; t < frames; ++t) {
    const float* frame = samples.data() + t * hop;
    for (int n = 0; n < n_fft; ++n) input[n] = frame[n] * window[n];
    (*fft)->Execute();
    std::span<const std::complex<float>> spectrum = (*fft)->output();
    std::span<float> row = power.row(t);
    for (std::size_t k = 0; k < spectrum.size(); ++k) row[k] = std::norm(spectrum[k]);
  }
  return power;
}

}  // namespace voxserve::audio::features
