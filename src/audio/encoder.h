// Incremental audio encoders: PCM in, container bytes out, so a request's audio can be sent as
// each segment finishes. Resampling to the format's rate (OutputSampleRate) happens inside.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/audio_format.h"

namespace voxserve::audio {

struct EncoderOptions {
  AudioFormat format = AudioFormat::kWav;
  int input_sample_rate = 22050;
  // When true, bytes are emitted as early as the format allows and headers that would need the
  // total length say "unknown" (WAV: 0xFFFFFFFF sizes); when false, Finish() emits one complete,
  // exact file.
  bool streaming = false;
  // The rate the client asked for (ResolveOutputSampleRate); 0 = the format's own.
  int output_sample_rate = 0;
};

// Not thread-safe: one request's encoder is driven by one thread at a time.
class AudioEncoder {
 public:
  virtual ~AudioEncoder() = default;
  // Appends the bytes that are ready to *out (possibly none).
  virtual absl::Status Encode(std::span<const float> samples, std::string* out) = 0;
  // Flushes everything that is left, trailers included. Call once; Encode is invalid afterwards.
  virtual absl::Status Finish(std::string* out) = 0;
};

absl::StatusOr<std::unique_ptr<AudioEncoder>> CreateEncoder(const EncoderOptions& options);

}  // namespace voxserve::audio
