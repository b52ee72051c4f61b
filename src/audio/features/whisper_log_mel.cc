#include "audio/features/whisper_log_mel.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "audio/features/mel_filterbank.h"
#include "audio/features/stft.h"
#include "audio/features/window.h"

namespace voxserve::audio::features {
namespace {

// openai-whisper whisper/audio.py: SAMPLE_RATE 16000, N_FFT 400 (25 ms), HOP_LENGTH 160 (10 ms).
constexpr int kSampleRate = 16000;
constexpr int kFftSize = 400;
constexpr int kHop = 160;

}  // namespace

absl::StatusOr<FeatureMatrix> WhisperLogMel(std::span<const float> samples_16k, int n_mels) {
  // torch.stft(center=True) pads n_fft / 2 on each side in reflect mode.
  auto padded = ReflectPad(samples_16k, kFftSize / 2, kFftSize / 2);
  if (!padded.ok()) return padded.status();
  auto power = PowerSpectrogram(*padded, kFftSize, kHop, HannWindow(kFftSize, /*periodic=*/true));
  if (!power.ok()) return power.status();
  auto filters = SlaneyMelFilterbank(kSampleRate, kFftSize, n_mels, 0.0, kSampleRate / 2.0);
  if (!filters.ok()) return filters.status();
  const std::vector<FilterSupport> supports = FilterSupports(*filters);

  const std::size_t frames = power->rows - 1;  // whisper: stft[..., :-1]
  FeatureMatrix log_mel(n_mels, frames);
  std::vector<float> mel(n_mels);
  float peak = -std::numeric_limits<float>::infinity();
  for (std::size_t t = 0; t < frames; ++t) {
    ApplyFilterbank(*filters, supports, power->row(t), mel);
    for (int m = 0; m < n_mels; ++m) {
      float value = std::log10(std::max(mel[m], 1e-10f));
      log_mel.at(m, t) = value;
      peak = std::max(peak, value);
    }
  }
  for (float& value : log_mel.values) value = (std::max(value, peak - 8.0f) + 4.0f) / 4.0f;
  return log_mel;
}

}  // namespace voxserve::audio::features
