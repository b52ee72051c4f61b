// Builds small 16-bit PCM mono WAV files in memory for tests of audio uploads.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace voxserve::test_support {

// `seconds` of a sine at `hz` (amplitude 0 = digital silence), canonical 44-byte header.
inline std::string WavBytes(double seconds, int sample_rate = 16000, double amplitude = 0.5,
                            double hz = 220.0) {
  auto frames = static_cast<uint32_t>(seconds * sample_rate);
  auto put32 = [](std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto put16 = [](std::string& out, uint16_t v) {
    out.push_back(static_cast<char>(v & 0xff));
    out.push_back(static_cast<char>(v >> 8));
  };
  std::string wav = "RIFF";
  put32(wav, 36 + frames * 2);
  wav += "WAVEfmt ";
  put32(wav, 16);
  put16(wav, 1);  // PCM
  put16(wav, 1);  // mono
  put32(wav, static_cast<uint32_t>(sample_rate));
  put32(wav, static_cast<uint32_t>(sample_rate) * 2);
  put16(wav, 2);
  put16(wav, 16);
  wav += "data";
  put32(wav, frames * 2);
  for (uint32_t i = 0; i < frames; ++i) {
    double value = amplitude * std::sin(2 * 3.14159265358979 * hz * i / sample_rate);
    put16(wav, static_cast<uint16_t>(static_cast<int16_t>(std::lround(value * 32767))));
  }
  return wav;
}

}  // namespace voxserve::test_support
