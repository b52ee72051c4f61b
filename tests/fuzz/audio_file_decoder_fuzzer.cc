// An uploaded audio file (audio/audio_file_decoder: WAV, FLAC, Ogg, MP3 through libsndfile),
// e.g. a voice-cloning prompt. The limits are tightened so that one input costs little; a
// decode past them must fail cleanly, never allocate for what a header claims.
#include <cstddef>
#include <cstdint>
#include <span>

#include "audio/audio_file_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  voxserve::audio::DecodeLimits limits;
  limits.max_seconds = 5.0;
  (void)voxserve::audio::DecodeAudioFile(std::span<const uint8_t>(data, size), limits);
  return 0;
}
