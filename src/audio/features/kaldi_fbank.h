// Kaldi's log mel filterbank features ("fbank"), as speaker-embedding models (CAM++) read them.
#pragma once

#include <span>

#include "absl/status/statusor.h"
#include "audio/features/feature_matrix.h"

namespace voxserve::audio::features {

// The options of torchaudio.compliance.kaldi.fbank this implements, at its defaults, except
// dither (always 0 here: features must be reproducible) and num_mel_bins (80, CAM++'s input).
// Not implemented (torchaudio's non-defaults): energy, htk_compat, VTLN, other windows,
// snip_edges=False, subtract_mean (SubtractMeanOverTime does it).
struct KaldiFbankOptions {
  int num_mel_bins = 80;
  double sample_rate = 16000.0;
  double frame_length_ms = 25.0;
  double frame_shift_ms = 10.0;
  double preemphasis = 0.97;
  double low_freq = 20.0;
  double high_freq = 0.0;  // <= 0: offset from Nyquist
};

// torchaudio.compliance.kaldi.fbank(samples, num_mel_bins, dither=0, sample_frequency) with the
// rest at defaults: frames of 400 samples every 160 (snip_edges: only whole frames, so
// 1 + (size - 400) / 160 of them), each with its mean removed, pre-emphasis 0.97 (the first
// sample against itself), the povey window, zero-padded to 512 points (round_to_power_of_two),
// power spectrum, Kaldi mel filters from 20 Hz to Nyquist, natural log of max(x, FLT_EPSILON).
// Samples are taken as they are (upstream passes [-1, 1] floats, not Kaldi's int16 range).
// Returns [frames, num_mel_bins]; fails when the signal is shorter than one frame.
// Thread-safe.
absl::StatusOr<FeatureMatrix> KaldiFbank(std::span<const float> samples,
                                         const KaldiFbankOptions& options = {});

// Subtracts each column's mean over the rows (time): CosyVoice's frontend does this to the
// fbank before CAM++ (cosyvoice/cli/frontend.py:114, feat - feat.mean(dim=0)).
void SubtractMeanOverTime(FeatureMatrix* features);

}  // namespace voxserve::audio::features
