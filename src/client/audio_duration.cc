#include "client/audio_duration.h"

namespace voxserve::client {
namespace {

// A header larger than this (e.g. a huge LIST chunk) is not worth holding: no duration then.
constexpr size_t kMaxWavHeader = 64 * 1024;
// voxserve's (and OpenAI's) raw pcm: 16-bit little-endian mono at 24 kHz.
constexpr int kDefaultPcmRate = 24000;

uint32_t Le32(const std::string& s, size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(s[at])) |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 1])) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 2])) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(s[at + 3])) << 24;
}
uint16_t Le16(const std::string& s, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(s[at]) |
                               static_cast<unsigned char>(s[at + 1]) << 8);
}

}  // namespace

AudioDurationCounter::AudioDurationCounter(std::string format, int sample_rate)
    : format_(std::move(format)), sample_rate_(sample_rate) {}

void AudioDurationCounter::Add(std::string_view bytes) {
  bytes_ += bytes.size();
  if (format_ != "wav") return;
  if (header_done_) {
    data_bytes_ += bytes.size();
    return;
  }
  if (header_.size() > kMaxWavHeader) return;
  header_.append(bytes);
  ParseWavHeader();
}

// RIFF: "RIFF" size "WAVE", then chunks (id, 32-bit size, payload padded to even) until "data".
void AudioDurationCounter::ParseWavHeader() {
  if (header_.size() < 12 || header_.compare(0, 4, "RIFF") != 0 ||
      header_.compare(8, 4, "WAVE") != 0) {
    return;
  }
  size_t at = 12;
  while (at + 8 <= header_.size()) {
    std::string id = header_.substr(at, 4);
    uint32_t size = Le32(header_, at + 4);
    if (id == "data") {
      header_done_ = true;
      data_bytes_ = header_.size() - (at + 8);
      header_.clear();
      return;
    }
    if (id == "fmt " && at + 8 + 16 <= header_.size()) {
      wav_rate_ = static_cast<int>(Le32(header_, at + 12));
      block_align_ = Le16(header_, at + 20);
    }
    at += 8 + size + (size & 1);
  }
}

std::optional<double> AudioDurationCounter::seconds() const {
  if (format_ == "pcm") {
    int rate = sample_rate_ > 0 ? sample_rate_ : kDefaultPcmRate;
    return static_cast<double>(bytes_) / (2.0 * rate);
  }
  if (format_ == "wav" && header_done_ && block_align_ > 0 && wav_rate_ > 0) {
    return static_cast<double>(data_bytes_ / static_cast<uint64_t>(block_align_)) / wav_rate_;
  }
  return std::nullopt;
}

}  // namespace voxserve::client
