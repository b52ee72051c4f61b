#include "client/wav_header.h"

#include <cstdint>

namespace voxserve::client {

std::string WavHeader(size_t data_bytes, int sample_rate) {
  std::string header;
  auto put = [&header](uint32_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) header += static_cast<char>((value >> (8 * i)) & 0xFF);
  };
  const bool unknown = data_bytes >= kUnknownWavLength;
  const auto data = static_cast<uint32_t>(unknown ? kUnknownWavLength : data_bytes);
  const auto rate = static_cast<uint32_t>(sample_rate);
  header += "RIFF";
  put(unknown ? static_cast<uint32_t>(kUnknownWavLength) : 36 + data, 4);
  header += "WAVEfmt ";
  put(16, 4);        // fmt chunk size
  put(1, 2);         // PCM
  put(1, 2);         // mono
  put(rate, 4);      // sample rate
  put(rate * 2, 4);  // byte rate
  put(2, 2);         // block align
  put(16, 2);        // bits per sample
  header += "data";
  put(data, 4);
  return header;
}

}  // namespace voxserve::client
