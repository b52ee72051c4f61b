#include "audio/features/kaldi_fbank.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "audio/features/mel_filterbank.h"
#include "audio/features/real_fft.h"
#include "audio/features/window.h"

namespace voxserve::audio::features {

absl::StatusOr<FeatureMatrix> KaldiFbank(std::span<const float> samples,
                                         const KaldiFbankOptions& options) {
  // torchaudio.compliance.kaldi._get_waveform_and_window_properties: int() truncation.
  const int window_size = static_cast<int>(options.sample_rate * options.frame_length_ms * 0.001);
  const int window_shift = static_cast<int>(options.sample_rate * options.frame_shift_ms * 0.001);
  if (window_size < 2 || window_shift < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Kaldi fbank frame of ", window_size, " samples every ", window_shift, " is too small"));
  }
  if (samples.size() < static_cast<std::size_t>(window_size)) {
    return absl::InvalidArgumentError(absl::StrCat("Kaldi fbank needs at least one frame of ",
                                                   window_size, " samples, got ", samples.size()));
  }
  int padded_size = 1;
  while (padded_size < window_size) padded_size *= 2;  // round_to_power_of_two

  auto fft = RealFft::Create(padded_size);
  if (!fft.ok()) return fft.status();
  auto filters = KaldiMelFilterbank(options.num_mel_bins, padded_size, options.sample_rate,
                                    options.low_freq, options.high_freq);
  if (!filters.ok()) return filters.status();
  const std::vector<FilterSupport> supports = FilterSupports(*filters);
  const std::vector<float> window = PoveyWindow(window_size);
  const float coefficient = static_cast<float>(options.preemphasis);
  // torch.finfo(torch.float).eps: the floor before the log (kaldi._get_epsilon).
  const float floor = std::numeric_limits<float>::epsilon();

  const std::size_t frames = 1 + (samples.size() - window_size) / window_shift;
  FeatureMatrix fbank(frames, options.num_mel_bins);
  std::vector<float> frame(window_size);
  std::vector<float> power(padded_size / 2 + 1);
  std::span<float> input = (*fft)->input();
  for (std::size_t t = 0; t < frames; ++t) {
    const float* source = samples.data() + t * window_shift;
    double sum = 0.0;
    for (int n = 0; n < window_size; ++n) sum += source[n];
    const float mean = static_cast<float>(sum / window_size);
    for (int n = 0; n < window_size; ++n) frame[n] = source[n] - mean;
    // Pre-emphasis from the DC-free frame, the first sample against itself (replicate pad).
    for (int n = window_size - 1; n >= 0; --n) {
      const float previous = frame[n > 0 ? n - 1 : 0];
      input[n] = (frame[n] - coefficient * previous) * window[n];
    }
    std::fill(input.begin() + window_size, input.end(), 0.0f);
    (*fft)->Execute();
    std::span<const std::complex<float>> spectrum = (*fft)->output();
    for (std::size_t k = 0; k < spectrum.size(); ++k) power[k] = std::norm(spectrum[k]);
    std::span<float> row = fbank.row(t);
    ApplyFilterbank(*filters, supports, power, row);
    for (float& value : row) value = std::log(std::max(value, floor));
  }
  return fbank;
}

void SubtractMeanOverTime(FeatureMatrix* features) {
  if (features->rows == 0) return;
  for (std::size_t c = 0; c < features->cols; ++c) {
    double sum = 0.0;
    for (std::size_t r = 0; r < features->rows; ++r) sum += features->at(r, c);
    const auto mean = static_cast<float>(sum / features->rows);
    for (std::size_t r = 0; r < features->rows; ++r) features->at(r, c) -= mean;
  }
}

}  // namespace voxserve::audio::features
