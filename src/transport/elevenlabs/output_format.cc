#include "transport/elevenlabs/output_format.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "core/error.h"

namespace voxserve::transport::elevenlabs {
namespace {

struct Known {
  std::string_view name;
  audio::AudioFormat format;
  int sample_rate;
  int bitrate_kbps;
};

// ElevenLabs' values (see the header) that voxserve's encoders can produce.
constexpr std::array<Known, 20> kKnown = {{
    {"mp3_22050_32", audio::AudioFormat::kMp3, 22050, 32},
    {"mp3_24000_48", audio::AudioFormat::kMp3, 24000, 48},
    {"mp3_44100_32", audio::AudioFormat::kMp3, 44100, 32},
    {"mp3_44100_64", audio::AudioFormat::kMp3, 44100, 64},
    {"mp3_44100_96", audio::AudioFormat::kMp3, 44100, 96},
    {"mp3_44100_128", audio::AudioFormat::kMp3, 44100, 128},
    {"mp3_44100_192", audio::AudioFormat::kMp3, 44100, 192},
    {"pcm_8000", audio::AudioFormat::kPcm, 8000, 0},
    {"pcm_16000", audio::AudioFormat::kPcm, 16000, 0},
    {"pcm_22050", audio::AudioFormat::kPcm, 22050, 0},
    {"pcm_24000", audio::AudioFormat::kPcm, 24000, 0},
    {"pcm_32000", audio::AudioFormat::kPcm, 32000, 0},
    {"pcm_44100", audio::AudioFormat::kPcm, 44100, 0},
    {"pcm_48000", audio::AudioFormat::kPcm, 48000, 0},
    {"ulaw_8000", audio::AudioFormat::kUlaw, 8000, 0},
    {"opus_48000_32", audio::AudioFormat::kOpus, 48000, 32},
    {"opus_48000_64", audio::AudioFormat::kOpus, 48000, 64},
    {"opus_48000_96", audio::AudioFormat::kOpus, 48000, 96},
    {"opus_48000_128", audio::AudioFormat::kOpus, 48000, 128},
    {"opus_48000_192", audio::AudioFormat::kOpus, 48000, 192},
}};

}  // namespace

absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view name) {
  for (const Known& known : kKnown) {
    if (known.name == name) {
      return OutputFormat{known.format, known.sample_rate, known.bitrate_kbps, std::string(name)};
    }
  }
  std::string supported;
  for (const Known& known : kKnown) {
    absl::StrAppend(&supported, supported.empty() ? "" : ", ", std::string(known.name));
  }
  return core::InvalidArgument(
      absl::StrCat("unsupported output_format ", core::Quoted(name), "; supported: ", supported),
      "output_format", "invalid_output_format");
}

std::string ContentTypeOf(const OutputFormat& format) {
  // Ogg Opus is what voxserve writes for opus; ElevenLabs answers these with audio/ogg too.
  if (format.format == audio::AudioFormat::kOpus) return "audio/ogg";
  return std::string(audio::ContentType(format.format));
}

}  // namespace voxserve::transport::elevenlabs
