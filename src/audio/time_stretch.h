// Changes the tempo of speech without changing its pitch (libsonic), for speeds an engine cannot
// reach on its own (espeak-ng's slowest rate is 80 wpm; OpenAI's speed goes down to 0.25).
#pragma once

#include "absl/status/statusor.h"
#include "audio/pcm.h"

namespace voxserve::audio {

// speed > 1 shortens, < 1 lengthens; the duration changes by 1/speed, and so do the times of
// audio.words (which are copied).
absl::StatusOr<PcmAudio> TimeStretch(const PcmAudio& audio, double speed);

}  // namespace voxserve::audio
