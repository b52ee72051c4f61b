// Mono PCM audio as engines produce it and encoders consume it.
#pragma once

#include <vector>

namespace voxserve::audio {

// Owned by value; moved along the pipeline (engine → scheduler → service → encoder).
struct PcmAudio {
  std::vector<float> samples;  // mono, nominally in [-1, 1]; encoders clip what lies outside
  int sample_rate = 0;

  double DurationSeconds() const {
    return sample_rate > 0 ? static_cast<double>(samples.size()) / sample_rate : 0.0;
  }
};

}  // namespace voxserve::audio
