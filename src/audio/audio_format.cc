#include "audio/audio_format.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <span>

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
constexpr std::array<FormatFacts, 7> kFormats = {{
    {AudioFormat::kMp3, "mp3", "audio/mpeg"},
    {AudioFormat::kOpus, "opus", "audio/opus"},  // Ogg Opus (RFC 7845)
    {AudioFormat::kAac, "aac", "audio/aac"},     // ADTS stream
    {AudioFormat::kFlac, "flac", "audio/flac"},
    {AudioFormat::kWav, "wav", "audio/wav"},
    {AudioFormat::kPcm, "pcm", "audio/pcm"},  // 16-bit little-endian mono at 24 kHz
    // G.711 mu-law at 8 kHz, headerless; "audio/basic" is its registered type (RFC 2046 §4.3.3).
    {AudioFormat::kUlaw, "ulaw", "audio/basic"},
}};

// pcm has no header to tell a client its rate, so it is fixed at OpenAI's 24 kHz.
constexpr int kPcmSampleRate = 24000;
// Ogg Opus is always encoded at 48 kHz here: Opus runs internally at 48 kHz, and libsndfile's
// Ogg Opus writer is validated at that rate (shared/reference/build-facts.md).
constexpr int kOpusSampleRate = 48000;
// G.711 is defined at 8 kHz (ITU-T G.711 §1); telephony peers expect nothing else.
constexpr int kUlawSampleRate = 8000;
// What a client may ask of the rate-free formats: narrowband telephony up to the studio rate.
constexpr int kMinRequestedRate = 8000;
constexpr int kMaxRequestedRate = 48000;

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
  return core::InvalidArgument(absl::StrCat("unsupported response_format ", core::Quoted(name),
                                            "; supported formats: ", supported),
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
    case AudioFormat::kUlaw:
      return kUlawSampleRate;
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

absl::StatusOr<int> ResolveOutputSampleRate(AudioFormat format, int input_rate,
                                            int requested_rate) {
  if (requested_rate == 0) return OutputSampleRate(format, input_rate);
  if (requested_rate == kVoiceSampleRate) {
    switch (format) {
      case AudioFormat::kPcm:
      case AudioFormat::kWav:
      case AudioFormat::kFlac:
        return std::clamp(input_rate, kMinRequestedRate, kMaxRequestedRate);
      default:
        return OutputSampleRate(format, input_rate);
    }
  }
  auto refuse = [&](const std::string& takes) -> absl::Status {
    return core::InvalidArgument(
        absl::StrCat("sample_rate ", requested_rate, " is not available for ",
                     std::string(FormatName(format)), "; it takes ", takes),
        "sample_rate", "unsupported_sample_rate");
  };
  auto listed = [](std::span<const int> rates) {
    std::string text;
    for (int rate : rates) absl::StrAppend(&text, text.empty() ? "" : ", ", rate);
    return text;
  };
  switch (format) {
    case AudioFormat::kPcm:
    case AudioFormat::kWav:
    case AudioFormat::kFlac:
      if (requested_rate < kMinRequestedRate || requested_rate > kMaxRequestedRate) {
        return refuse(absl::StrCat("a rate in [", kMinRequestedRate, ", ", kMaxRequestedRate, "]"));
      }
      return requested_rate;
    case AudioFormat::kOpus:
    case AudioFormat::kUlaw:
      if (requested_rate != OutputSampleRate(format, input_rate)) {
        return refuse(absl::StrCat("only ", OutputSampleRate(format, input_rate)));
      }
      return requested_rate;
    case AudioFormat::kMp3:
      for (int rate : kMp3SampleRates) {
        if (rate == requested_rate) return rate;
      }
      return refuse(listed(kMp3SampleRates));
    case AudioFormat::kAac:
      for (int rate : kAacSampleRates) {
        if (rate == requested_rate) return rate;
      }
      return refuse(listed(kAacSampleRates));
  }
  std::abort();  // unreachable: every enumerator is handled above
}

}  // namespace voxserve::audio
