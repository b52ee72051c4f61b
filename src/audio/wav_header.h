// A check of a WAV file's fmt and data chunks, run before libsndfile opens it.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/status.h"

namespace voxserve::audio {

// libsndfile 1.2 reads a WAV header's sample format as it comes: an odd bit depth is rounded up
// to whole bytes (7 bits reads as 8-bit samples, so 16-bit data comes out twice as long), and a
// block align that does not match channels x bytes is not refused. This reads the RIFF, RIFX or
// RF64 chunk list itself and refuses a header that does not describe its data:
//   - PCM samples of 8, 16, 24 or 32 bits (WAVE_FORMAT_EXTENSIBLE: the container's bits, with
//     at most that many valid bits), float of 32 or 64, A-law and µ-law of 8;
//   - for those, a block align of channels x bytes per sample;
//   - a data size (unless it says "unknown": 0 or 0xFFFFFFFF, as streaming writers put it) that
//     is a whole number of blocks.
// Other codecs (ADPCM, GSM, ...) are libsndfile's to judge. Returns OK for data that is not a
// WAVE file (FLAC, Ogg, ...: not this check's business), InvalidArgument naming what is wrong.
// Reads only within `bytes`; thread-safe.
absl::Status CheckWavHeader(std::span<const uint8_t> bytes);

}  // namespace voxserve::audio
