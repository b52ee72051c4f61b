// The log-mel spectrogram of HiFi-GAN / Matcha-TTS (matcha.utils.audio.mel_spectrogram), which
// CosyVoice's flow decoder is trained on.
#pragma once

#include <span>

#include "absl/status/statusor.h"
#include "audio/features/feature_matrix.h"

namespace voxserve::audio::features {

// mel_spectrogram's arguments. Window length equals n_fft (every caller here; torch would
// centre a shorter window inside the frame).
struct MatchaMelConfig {
  int sample_rate = 0;
  int n_fft = 0;
  int hop = 0;
  int n_mels = 0;
  double fmin = 0.0;
  double fmax = 0.0;
};

// matcha.utils.audio.mel_spectrogram(y, ..., center=False): reflect padding of
// (n_fft - hop) / 2 on each side, STFT with a periodic Hann window, magnitude
// sqrt(re^2 + im^2 + 1e-9), librosa's Slaney mel filters, natural log of max(x, 1e-5).
// Returns [frames, n_mels] (time-major, as CosyVoice's frontend transposes it). Fails when the
// signal is not longer than the padding. Thread-safe.
absl::StatusOr<FeatureMatrix> MatchaMelSpectrogram(std::span<const float> samples,
                                                   const MatchaMelConfig& config);

}  // namespace voxserve::audio::features
