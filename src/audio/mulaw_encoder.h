// G.711 mu-law (ITU-T G.711, the North American/Japanese telephone companding): 8 bits per
// sample, no header. Telephony stacks (Twilio media streams, SIP/RTP payload type 0) take it at
// 8 kHz; the encoder takes samples already at its rate (ResamplingEncoder does the rest).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "audio/encoder.h"

namespace voxserve::audio {

// One 16-bit linear sample to its mu-law byte, as G.711 defines it (and as Sun's g711.c and
// Python's audioop.lin2ulaw compute it): bias 0x84, segment number, 4 mantissa bits, inverted.
std::uint8_t LinearToMulaw(std::int16_t sample);

// Not thread-safe (one request's encoder). Streaming or not, bytes are emitted as they come:
// mu-law has no container whose header needs the total length.
class MulawEncoder final : public AudioEncoder {
 public:
  absl::Status Encode(std::span<const float> samples, std::string* out) override;
  absl::Status Finish(std::string* out) override;

 private:
  bool finished_ = false;
};

}  // namespace voxserve::audio
