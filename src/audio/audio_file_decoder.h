// Decodes an uploaded audio file (WAV, FLAC, Ogg Vorbis/Opus, MP3, AIFF) from memory to mono PCM.
#pragma once

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "audio/pcm.h"

namespace voxserve::audio {

// Bounds on what one file may decode to, so that a header claiming hours of audio (or a
// thousand channels) cannot make the decoder allocate without limit: decoding stops and fails
// as soon as the audio passes max_seconds, whatever the header said.
struct DecodeLimits {
  double max_seconds = 60.0;
  int max_sample_rate = 192000;  // the highest rate common recording gear produces
  int max_channels = 8;          // 7.1; more is no voice recording
};

// Decodes `bytes` (the whole file, owned by the caller and only read during the call) with
// libsndfile's virtual I/O and mixes its channels to mono by their mean, as CosyVoice's
// load_wav does (cosyvoice/utils/file_utils.py: speech.mean(dim=0)). Samples are floats in
// [-1, 1] for integer formats (libsndfile's normalization, the same as soundfile's).
// Errors: InvalidArgument for empty, unrecognised, unsupported, truncated or corrupt data, for
// a WAV header that does not describe its data (audio/wav_header.h) and for non-finite samples;
// OutOfRange when the audio is longer than limits.max_seconds (the message names the limit) or its
// rate or channel count exceeds the limits. Thread-safe (each call opens its own decoder).
absl::StatusOr<PcmAudio> DecodeAudioFile(std::span<const uint8_t> bytes,
                                         const DecodeLimits& limits = {});

}  // namespace voxserve::audio
