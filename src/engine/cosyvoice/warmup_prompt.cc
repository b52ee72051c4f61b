#include "engine/cosyvoice/warmup_prompt.h"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

#include "audio/pcm_encoder.h"

namespace voxserve::engine::cosyvoice {

std::string SyntheticPromptWav() {
  constexpr int kRate = 24000;
  constexpr int kSamples = 3 * kRate;
  std::vector<int16_t> pcm(kSamples);
  double phase = 0;
  for (int i = 0; i < kSamples; ++i) {
    const double t = static_cast<double>(i) / kRate;
    const double f0 = 120 + 30 * std::sin(2 * std::numbers::pi * 0.7 * t);  // intonation
    phase += 2 * std::numbers::pi * f0 / kRate;
    double voiced = 0;
    for (int harmonic = 1; harmonic <= 8; ++harmonic)
      voiced += std::sin(harmonic * phase) / harmonic;
    const double syllables = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * 4 * t);
    pcm[i] = static_cast<int16_t>(6000 * syllables * voiced);
  }
  std::string wav = audio::WavHeader(kRate, static_cast<uint32_t>(pcm.size() * 2));
  for (int16_t sample : pcm) {  // little-endian, as the header says
    wav.push_back(static_cast<char>(sample & 0xff));
    wav.push_back(static_cast<char>((sample >> 8) & 0xff));
  }
  return wav;
}

}  // namespace voxserve::engine::cosyvoice
