// Seconds of audio in a byte stream, counted as the bytes arrive, for the formats whose size says
// it: pcm (16-bit mono: bytes / (2 × rate)) and WAV (data bytes / block align / rate, from the
// header's fmt chunk; a streamed WAV's "unknown length" sizes are ignored). Compressed formats
// would need a decoder: no answer for them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace voxserve::client {

class AudioDurationCounter {
 public:
  // `format`: the request's response_format; `sample_rate`: X-Sample-Rate (0: unknown; pcm is
  // then taken as voxserve's and OpenAI's 24 kHz).
  AudioDurationCounter(std::string format, int sample_rate);
  void Add(std::string_view bytes);
  std::optional<double> seconds() const;

 private:
  void ParseWavHeader();

  std::string format_;
  int sample_rate_;
  uint64_t bytes_ = 0;
  // WAV: the header is kept until the data chunk is found.
  std::string header_;
  bool header_done_ = false;
  uint64_t data_bytes_ = 0;
  int block_align_ = 0;
  int wav_rate_ = 0;
};

}  // namespace voxserve::client
