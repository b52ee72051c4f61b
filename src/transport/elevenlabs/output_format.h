// ElevenLabs' `output_format` query parameter ("codec_rate[_bitrate]", e.g. mp3_44100_128,
// pcm_16000, ulaw_8000) mapped onto voxserve's encoders and resampler. The list is the one the
// text-to-speech reference gives:
// https://elevenlabs.io/docs/api-reference/text-to-speech/convert#request.query.output_format
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "audio/audio_format.h"

namespace voxserve::transport::elevenlabs {

struct OutputFormat {
  audio::AudioFormat format = audio::AudioFormat::kMp3;
  int sample_rate = 44100;
  // Asked for, not honoured: voxserve's MP3/Opus encoders pick their own bit rate (docs).
  int bitrate_kbps = 0;
  std::string name;  // as the client wrote it
};

// ElevenLabs' default when the parameter is absent.
inline constexpr std::string_view kDefaultOutputFormat = "mp3_44100_128";

// InvalidArgument (param "output_format", code "invalid_output_format") naming the supported
// values for anything else: alaw_8000 and the wav_* values are not offered.
absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view name);

// "audio/mpeg", "audio/pcm", "audio/basic" (mu-law), "audio/ogg" (Opus).
std::string ContentTypeOf(const OutputFormat& format);

}  // namespace voxserve::transport::elevenlabs
