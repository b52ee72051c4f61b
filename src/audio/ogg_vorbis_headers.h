// A check of an Ogg Vorbis file's three header packets, run before libsndfile opens it.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/status.h"

namespace voxserve::audio {

// libsndfile 1.2.0 leaks libvorbis's codec setup (5.8 KB, allocated by vorbis_info_init) each
// time it fails to read a Vorbis stream's headers (found by fuzzing DecodeAudioFile under
// LeakSanitizer): every malformed upload would cost the server memory for good. This reads the
// headers of the first logical stream with libogg and libvorbis themselves, the same calls
// libsndfile makes, and always frees what they allocate; libsndfile only sees files whose
// headers parse. Returns OK for data that is not Ogg Vorbis (Opus, FLAC, WAV, ...: not this
// check's business), InvalidArgument when the Vorbis headers are incomplete or corrupt.
// Thread-safe.
absl::Status CheckOggVorbisHeaders(std::span<const uint8_t> bytes);

}  // namespace voxserve::audio
