#include "audio/audio_format.h"

#include <array>
#include <cstdlib>
#include <span>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "audio/codec_sample_rates.h"
#include "core/error.h"

namespace voxserve::audio {
namespace {

struct FormatFacts {
  AudioFormat format;
  std::string_view name;
  std::string_view content_type;
};

// Listed in OpenAI's order, which is also the order the error message names them in.
constexpr std::array<FormatFacts, 6> kFormats = {{
    {AudioFormat::kMp3, "mp3", "audio/mpeg"},
    {AudioFormat::kOpus, "opus", "audio/opus"},  // Ogg Opus (RFC 7845)
    {AudioFormat::kAac, "aac", "audio/aac"},     // ADTS stream
    {AudioFormat::kFlac, "flac", "audio/flac"},
    {AudioFormat::kWav, "wav", "audio/wav"},
    {AudioFormat::kPcm, "pcm", "audio/pcm"},  // 16-bit little-endian mono at 24 kHz
}};

// pcm has no header to tell a client its rate, so it is fixed at OpenAI's 24 kHz.
constexpr int kPcmSampleRate = 24000;
// Ogg Opus is always encoded at 48 kHz here: Opus runs internally at 48 kHz, and libsndfile's
// Ogg Opus writer is validated at that rate (shared/reference/build-facts.md).
constexpr int kOpusSampleRate = 48000;

const FormatFacts& FactsOf(AudioFormat format) {
  for (const FormatFacts& facts : kFormats) {
    if (facts.format == format) return facts;
  }
  std::abort();  // unreachable: kFormats lists every enumerator
}

// The supported rate closest to `rate`; on a tie the higher one, which keeps more bandwidth.
int NearestRate(std::span<const int> supported, int rate) {
  int best = supported.front();
  for (int candidate : supported) {
    long distance = std::labs(static_cast<long>(candidate) - rate);
    long best_distance = std::labs(static_cast<long>(best) - rate);
    if (distance < best_distance || (distance == best_distance && candidate > best)) {
      best = candidate;
    }
  }
  return best;
}

}  // namespace

absl::StatusOr<AudioFormat> ParseAudioFormat(std::string_view name) {
  for (const FormatFacts& facts : kFormats) {
    if (facts.name == name) return facts.format;
  }
  std::string supported;
  for (const FormatFacts& facts : kFormats) {
    absl::StrAppend(&supported, supported.empty() ? "" : ", ", std::string(facts.name));
  }
  return core::InvalidArgument(
      absl::StrCat("unsupported response_format \"", absl::CHexEscape(std::string(name)),
                   "\"; supported formats: ", supported),
      "response_format", "unsupported_response_format");
}

std::string_view FormatName(AudioFormat format) { return FactsOf(format).name; }

std::string_view ContentType(AudioFormat format) { return FactsOf(format).content_type; }

int OutputSampleRate(AudioFormat format, int input_rate) {
  switch (format) {
    case AudioFormat::kPcm:
      return kPcmSampleRate;
    case AudioFormat::kOpus:
      return kOpusSampleRate;
    case AudioFormat::kMp3:
      return NearestRate(kMp3SampleRates, input_rate);
    case AudioFormat::kAac:
      return NearestRate(kAacSampleRates, input_rate);
    case AudioFormat::kFlac:
    case AudioFormat::kWav:
      return input_rate;
  }
  std::abort();  // unreachable: every enumerator is handled above
}

}  // namespace voxserve::audio
