// 16-bit little-endian mono PCM, bare (OpenAI's "pcm") or in a canonical 44-byte WAV header.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "audio/encoder.h"

namespace voxserve::audio {

// The 44-byte RIFF/WAVE header for 16-bit mono PCM. Without `data_bytes` (a stream of unknown
// length) the RIFF and data sizes are 0xFFFFFFFF, which players read as "until the end".
std::string WavHeader(int sample_rate, std::optional<std::uint32_t> data_bytes);

// Takes samples already at `sample_rate`. Streaming: every Encode emits its samples at once (the
// WAV header, with unknown sizes, comes first on the first call). Non-streaming: Finish emits the
// whole file, the WAV header with exact sizes.
class PcmEncoder final : public AudioEncoder {
 public:
  enum class Container { kNone, kWav };

  PcmEncoder(Container container, int sample_rate, bool streaming);

  absl::Status Encode(std::span<const float> samples, std::string* out) override;
  absl::Status Finish(std::string* out) override;

 private:
  Container container_;
  int sample_rate_;
  bool streaming_;
  bool header_written_ = false;
  bool finished_ = false;
  std::string data_;  // non-streaming only: every sample so far, as PCM bytes
};

}  // namespace voxserve::audio
