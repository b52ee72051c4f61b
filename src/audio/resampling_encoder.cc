#include "audio/resampling_encoder.h"

#include <utility>

namespace voxserve::audio {

ResamplingEncoder::ResamplingEncoder(std::unique_ptr<Resampler> resampler,
                                     std::unique_ptr<AudioEncoder> inner)
    : resampler_(std::move(resampler)), inner_(std::move(inner)) {}

absl::Status ResamplingEncoder::Encode(std::span<const float> samples, std::string* out) {
  resampled_.clear();
  if (absl::Status status = resampler_->Process(samples, &resampled_); !status.ok()) return status;
  return inner_->Encode(resampled_, out);
}

absl::Status ResamplingEncoder::Finish(std::string* out) {
  resampled_.clear();
  if (absl::Status status = resampler_->Flush(&resampled_); !status.ok()) return status;
  if (absl::Status status = inner_->Encode(resampled_, out); !status.ok()) return status;
  return inner_->Finish(out);
}

}  // namespace voxserve::audio
