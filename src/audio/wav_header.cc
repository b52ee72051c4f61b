#include "audio/wav_header.h"

#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace voxserve::audio {
namespace {

// WAVEFORMATEX wFormatTag values (mmreg.h).
constexpr uint16_t kFormatPcm = 0x0001;
constexpr uint16_t kFormatFloat = 0x0003;
constexpr uint16_t kFormatAlaw = 0x0006;
constexpr uint16_t kFormatMulaw = 0x0007;
constexpr uint16_t kFormatExtensible = 0xFFFE;
// A data or RIFF size that means "not known when the header was written".
constexpr uint32_t kUnknownSize = 0xFFFFFFFF;

// Little- or big-endian (RIFX) reads within bytes; nullopt past the end.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, bool big_endian) : bytes_(bytes), big_(big_endian) {}

  std::optional<uint64_t> Read(size_t offset, size_t width) const {
    if (offset > bytes_.size() || bytes_.size() - offset < width) return std::nullopt;
    uint64_t value = 0;
    for (size_t i = 0; i < width; ++i) {
      const uint64_t byte = bytes_[offset + (big_ ? i : width - 1 - i)];
      value = (value << 8) | byte;
    }
    return value;
  }
  bool TagIs(size_t offset, std::string_view tag) const {
    return offset <= bytes_.size() && bytes_.size() - offset >= tag.size() &&
           std::memcmp(bytes_.data() + offset, tag.data(), tag.size()) == 0;
  }
  size_t size() const { return bytes_.size(); }

 private:
  std::span<const uint8_t> bytes_;
  bool big_;
};

struct Format {
  uint16_t tag = 0;  // the subformat's, for WAVE_FORMAT_EXTENSIBLE
  uint16_t channels = 0;
  uint16_t block_align = 0;
  uint16_t bits = 0;
  uint16_t valid_bits = 0;  // WAVE_FORMAT_EXTENSIBLE only; 0 = as bits
};

// The sample formats this check judges; other codecs (ADPCM, GSM, ...) are libsndfile's.
bool IsSampleFormat(uint16_t tag) {
  return tag == kFormatPcm || tag == kFormatFloat || tag == kFormatAlaw || tag == kFormatMulaw;
}

absl::Status Malformed(std::string_view why) {
  return absl::InvalidArgumentError("audio file has a malformed WAV header: " + std::string(why));
}

absl::StatusOr<Format> ReadFormat(const Reader& in, size_t body, uint64_t size) {
  if (size < 16)
    return Malformed(absl::StrCat("its fmt chunk is ", size, " bytes, not 16 or more"));
  Format format;
  format.tag = static_cast<uint16_t>(*in.Read(body, 2));
  format.channels = static_cast<uint16_t>(*in.Read(body + 2, 2));
  format.block_align = static_cast<uint16_t>(*in.Read(body + 12, 2));
  format.bits = static_cast<uint16_t>(*in.Read(body + 14, 2));
  if (format.tag == kFormatExtensible) {
    // cbSize, wValidBitsPerSample, dwChannelMask, then the SubFormat GUID, whose first two bytes
    // are the format tag it stands for (KSDATAFORMAT_SUBTYPE_PCM: 1, _IEEE_FLOAT: 3).
    if (size < 40) {
      return Malformed(
          absl::StrCat("its WAVE_FORMAT_EXTENSIBLE fmt chunk is ", size, " bytes, not 40 or more"));
    }
    format.valid_bits = static_cast<uint16_t>(*in.Read(body + 18, 2));
    format.tag = static_cast<uint16_t>(*in.Read(body + 24, 2));
  }
  return format;
}

absl::Status CheckFormat(const Format& f) {
  if (f.channels == 0) return Malformed("it says 0 channels");
  if (f.block_align == 0) return Malformed("its block align is 0");
  switch (f.tag) {
    case kFormatPcm:
      if (f.bits != 8 && f.bits != 16 && f.bits != 24 && f.bits != 32) {
        return Malformed(absl::StrCat(f.bits, "-bit PCM; PCM samples have 8, 16, 24 or 32 bits"));
      }
      break;
    case kFormatFloat:
      if (f.bits != 32 && f.bits != 64) {
        return Malformed(absl::StrCat(f.bits, "-bit float; float samples have 32 or 64 bits"));
      }
      break;
    case kFormatAlaw:
    case kFormatMulaw:
      if (f.bits != 8) {
        return Malformed(absl::StrCat(f.bits, "-bit A-law/µ-law; their samples have 8 bits"));
      }
      break;
    default:
      return absl::OkStatus();  // a codec libsndfile judges (ADPCM, GSM, ...)
  }
  if (f.valid_bits > f.bits) {
    return Malformed(absl::StrCat(f.valid_bits, " valid bits in a ", f.bits, "-bit sample"));
  }
  const uint32_t expected = static_cast<uint32_t>(f.channels) * (f.bits / 8);
  if (f.block_align != expected) {
    return Malformed(absl::StrCat("its block align is ", f.block_align, " bytes; ", f.channels,
                                  " channel(s) of ", f.bits, "-bit samples take ", expected));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckWavHeader(std::span<const uint8_t> bytes) {
  const Reader probe(bytes, false);
  const bool riff = probe.TagIs(0, "RIFF"), rifx = probe.TagIs(0, "RIFX"),
             rf64 = probe.TagIs(0, "RF64");
  if (!riff && !rifx && !rf64) return absl::OkStatus();
  if (bytes.size() < 12) return Malformed("the file ends inside its RIFF header");
  if (!probe.TagIs(8, "WAVE")) return absl::OkStatus();  // another RIFF form (AVI, ...)
  const Reader in(bytes, rifx);

  std::optional<Format> format;
  std::optional<uint64_t> rf64_data_size;  // from the ds64 chunk
  size_t offset = 12;
  // Each step moves past one chunk header at least: bounded by the file's size.
  while (offset + 8 <= in.size()) {
    const uint64_t size = *in.Read(offset + 4, 4);
    const size_t body = offset + 8;
    const bool fits = size <= in.size() - body;
    if (in.TagIs(offset, "ds64") && rf64) {
      if (size < 24 || !fits) return Malformed("its RF64 ds64 chunk is cut short");
      rf64_data_size = *in.Read(body + 8, 8);
    } else if (in.TagIs(offset, "fmt ")) {
      if (!fits) return Malformed("the file ends inside its fmt chunk");
      absl::StatusOr<Format> read = ReadFormat(in, body, size);
      if (!read.ok()) return read.status();
      if (absl::Status checked = CheckFormat(*read); !checked.ok()) return checked;
      format = *read;
    } else if (in.TagIs(offset, "data")) {
      if (!format) return Malformed("its data chunk comes before any fmt chunk");
      uint64_t data_size = size;
      if (rf64 && size == kUnknownSize && rf64_data_size) data_size = *rf64_data_size;
      const bool unknown = data_size == 0 || (data_size == kUnknownSize && !rf64_data_size);
      if (!unknown && IsSampleFormat(format->tag) && data_size % format->block_align != 0) {
        return Malformed(absl::StrCat("its data size of ", data_size,
                                      " bytes is not a whole number of ", format->block_align,
                                      "-byte blocks"));
      }
      return absl::OkStatus();  // what follows the data is libsndfile's to skip
    }
    if (!fits) break;  // a chunk cut short by the end of the file: libsndfile reports it
    offset = body + static_cast<size_t>(size) + (size & 1);  // chunks are padded to even sizes
  }
  if (!format) return Malformed("it has no fmt chunk");
  return absl::OkStatus();  // no data chunk: libsndfile says so
}

}  // namespace voxserve::audio
