// FLAC, MP3 and Ogg Opus through libsndfile (libFLAC, LAME, libopus), written into memory.
#pragma once

#include <sndfile.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/audio_format.h"
#include "audio/encoder.h"
#include "audio/sndfile_memory_output.h"

namespace voxserve::audio {

// Takes samples already at `sample_rate` (OutputSampleRate of the format). Streaming: each
// Encode emits what the codec has finished (libFLAC a frame per 4096 samples, LAME a frame per
// 576 or 1152 samples after its lookahead, Ogg pages of at least 50 ms); Finish emits the rest.
// Non-streaming: Finish emits the whole file, with the headers libsndfile completes at close.
class SndfileEncoder final : public AudioEncoder {
 public:
  // `format` is kFlac, kMp3 or kOpus.
  static absl::StatusOr<std::unique_ptr<SndfileEncoder>> Create(AudioFormat format, int sample_rate,
                                                                bool streaming);
  ~SndfileEncoder() override;
  SndfileEncoder(const SndfileEncoder&) = delete;
  SndfileEncoder& operator=(const SndfileEncoder&) = delete;

  absl::Status Encode(std::span<const float> samples, std::string* out) override;
  absl::Status Finish(std::string* out) override;

 private:
  explicit SndfileEncoder(bool streaming);

  bool streaming_;
  bool wrote_samples_ = false;
  SndfileMemoryOutput output_;  // libsndfile writes here; declared before file_, outlives it
  SNDFILE* file_ = nullptr;     // owned; null once closed
  std::vector<float> clipped_;  // scratch for one chunk
};

}  // namespace voxserve::audio
