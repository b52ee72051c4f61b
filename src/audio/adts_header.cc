#include "audio/adts_header.h"

#include "absl/strings/str_cat.h"
#include "audio/codec_sample_rates.h"

namespace voxserve::audio {
namespace {

constexpr std::size_t kHeaderBytes = 7;
constexpr std::size_t kMaxFrameBytes = (1 << 13) - 1;
constexpr unsigned kProfileAacLc = 1;  // audioObjectType 2 (AAC LC) minus one
constexpr unsigned kChannelConfigurationMono = 1;
constexpr unsigned kBufferFullnessVbr = 0x7FF;  // "variable bit rate", no buffer model

}  // namespace

absl::StatusOr<int> AacSamplingFrequencyIndex(int sample_rate) {
  for (std::size_t i = 0; i < kAacSampleRates.size(); ++i) {
    if (kAacSampleRates[i] == sample_rate) return static_cast<int>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat("AAC cannot carry ", sample_rate, " Hz"));
}

absl::Status AppendAdtsHeader(int sampling_frequency_index, std::size_t payload_bytes,
                              std::string* out) {
  if (sampling_frequency_index < 0 ||
      sampling_frequency_index >= static_cast<int>(kAacSampleRates.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("no AAC samplingFrequencyIndex ", sampling_frequency_index));
  }
  std::size_t frame_bytes = payload_bytes + kHeaderBytes;
  if (frame_bytes > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("an ADTS frame holds at most ", kMaxFrameBytes, " bytes, got ", frame_bytes));
  }
  auto index = static_cast<unsigned>(sampling_frequency_index);
  auto length = static_cast<unsigned>(frame_bytes);
  const unsigned char header[kHeaderBytes] = {
      0xFF,  // syncword 0xFFF ...
      0xF1,  // ... ID 0 (MPEG-4), layer 00, protection_absent 1
      static_cast<unsigned char>((kProfileAacLc << 6) | (index << 2) |
                                 (kChannelConfigurationMono >> 2)),
      static_cast<unsigned char>(((kChannelConfigurationMono & 0x3) << 6) | (length >> 11)),
      static_cast<unsigned char>((length >> 3) & 0xFF),
      static_cast<unsigned char>(((length & 0x7) << 5) | (kBufferFullnessVbr >> 6)),
      static_cast<unsigned char>(((kBufferFullnessVbr & 0x3F) << 2)),  // + 0 raw blocks - 1
  };
  out->append(reinterpret_cast<const char*>(header), kHeaderBytes);
  return absl::OkStatus();
}

}  // namespace voxserve::audio
