// The log-mel spectrogram OpenAI Whisper's encoder reads (and CosyVoice's speech tokenizer).
#pragma once

#include <span>

#include "absl/status/statusor.h"
#include "audio/features/feature_matrix.h"

namespace voxserve::audio::features {

// whisper.audio.log_mel_spectrogram(audio, n_mels) on 16 kHz mono samples: 400-point STFT with
// a periodic Hann window, hop 160 (100 frames/s), centred with reflect padding, the last frame
// dropped (so size / 160 frames); power spectrum; Slaney mel filters (librosa's, fmax 8 kHz);
// log10 of max(x, 1e-10); floored at the whole matrix's maximum minus 8 (80 dB of range);
// mapped by (x + 4) / 4. Returns [n_mels, frames]. Fails for signals of 200 samples or fewer
// (the reflect padding needs more). Thread-safe.
absl::StatusOr<FeatureMatrix> WhisperLogMel(std::span<const float> samples_16k, int n_mels = 128);

}  // namespace voxserve::audio::features
