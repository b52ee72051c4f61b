#include "audio/pcm_encoder.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "audio/sample_conversion.h"

namespace voxserve::audio {
namespace {

constexpr std::uint32_t kUnknownSize = 0xFFFFFFFF;
// What the RIFF size counts besides the samples: "WAVE", the fmt chunk (24), the data header (8).
constexpr std::uint32_t kHeaderBytesAfterRiffSize = 36;
constexpr int kBytesPerSample = 2;
constexpr std::size_t kWavHeaderBytes = 44;

void AppendLe(std::uint32_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

}  // namespace

std::string WavHeader(int sample_rate, std::optional<std::uint32_t> data_bytes) {
  std::string header;
  header.reserve(44);
  header += "RIFF";
  AppendLe(data_bytes ? *data_bytes + kHeaderBytesAfterRiffSize : kUnknownSize, 4, &header);
  header += "WAVEfmt ";
  AppendLe(16, 4, &header);  // fmt chunk size for plain PCM
  AppendLe(1, 2, &header);   // WAVE_FORMAT_PCM
  AppendLe(1, 2, &header);   // channels
  AppendLe(static_cast<std::uint32_t>(sample_rate), 4, &header);
  AppendLe(static_cast<std::uint32_t>(sample_rate * kBytesPerSample), 4, &header);  // byte rate
  AppendLe(kBytesPerSample, 2, &header);                                            // block align
  AppendLe(16, 2, &header);                                                         // bits
  header += "data";
  AppendLe(data_bytes.value_or(kUnknownSize), 4, &header);
  return header;
}

PcmEncoder::PcmEncoder(Container container, int sample_rate, bool streaming)
    : container_(container), sample_rate_(sample_rate), streaming_(streaming) {
  // A whole WAV file is built in place: the header's room comes first and is filled in by
  // Finish, so the file is handed over without copying its samples behind a header.
  if (!streaming_ && container_ == Container::kWav) data_.assign(kWavHeaderBytes, '\0');
}

absl::Status PcmEncoder::Encode(std::span<const float> samples, std::string* out) {
  if (finished_) return absl::FailedPreconditionError("Encode called after Finish");
  if (!streaming_) {
    AppendPcm16Le(samples, &data_);
    return absl::OkStatus();
  }
  if (container_ == Container::kWav && !header_written_) {
    *out += WavHeader(sample_rate_, std::nullopt);
    header_written_ = true;
  }
  AppendPcm16Le(samples, out);
  return absl::OkStatus();
}

absl::Status PcmEncoder::Finish(std::string* out) {
  if (finished_) return absl::FailedPreconditionError("Finish called twice");
  finished_ = true;
  if (streaming_) {
    // A stream with no samples still has to be a WAV file.
    if (container_ == Container::kWav && !header_written_) {
      *out += WavHeader(sample_rate_, std::nullopt);
    }
    return absl::OkStatus();
  }
  if (container_ == Container::kWav) {
    const std::size_t samples_bytes = data_.size() - kWavHeaderBytes;
    if (samples_bytes > std::numeric_limits<std::uint32_t>::max() - kHeaderBytesAfterRiffSize) {
      return absl::OutOfRangeError(absl::StrCat(
          "WAV holds at most 4 GiB of samples; this audio has ", samples_bytes, " bytes"));
    }
    const std::string header = WavHeader(sample_rate_, static_cast<std::uint32_t>(samples_bytes));
    data_.replace(0, kWavHeaderBytes, header);
  }
  if (out->empty()) {
    *out = std::move(data_);
  } else {
    *out += data_;
  }
  data_.clear();
  return absl::OkStatus();
}

}  // namespace voxserve::audio
