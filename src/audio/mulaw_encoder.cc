#include "audio/mulaw_encoder.h"

#include <algorithm>

#include "audio/sample_conversion.h"

namespace voxserve::audio {

std::uint8_t LinearToMulaw(std::int16_t sample) {
  // ITU-T G.191 (the G.711 reference code, ulaw_compress): the magnitude of a negative sample
  // is its one's complement, so -1 and 0 land in the same (smallest) step; in 14-bit units plus
  // the bias of 33 that makes the segment boundaries powers of two.
  const bool negative = sample < 0;
  const int magnitude = negative ? ~static_cast<int>(sample) : static_cast<int>(sample);
  const int biased = std::min((magnitude >> 2) + 33, 0x1FFF);
  int segment = 1;  // 1..8: one more than the bit length of biased >> 6
  for (int rest = biased >> 6; rest != 0; rest >>= 1) ++segment;
  const int mantissa = (biased >> segment) & 0x0F;
  // Every bit is inverted on the wire (G.711 §3, to keep the line busy on silence); the sign bit
  // ends up set for positive samples.
  const int code = ((8 - segment) << 4) | (0x0F - mantissa);
  return static_cast<std::uint8_t>(negative ? code : code | 0x80);
}

absl::Status MulawEncoder::Encode(std::span<const float> samples, std::string* out) {
  if (finished_) return absl::FailedPreconditionError("Encode after Finish");
  out->reserve(out->size() + samples.size());
  for (float sample : samples) {
    out->push_back(static_cast<char>(LinearToMulaw(FloatToInt16(sample))));
  }
  return absl::OkStatus();
}

absl::Status MulawEncoder::Finish(std::string* /*out*/) {
  if (finished_) return absl::FailedPreconditionError("Finish called twice");
  finished_ = true;
  return absl::OkStatus();
}

}  // namespace voxserve::audio
