#include "engine/cosyvoice/warmup_prompt.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "audio/pcm_encoder.h"

namespace voxserve::engine::cosyvoice {

std::string SyntheticPromptWav() {
  constexpr int kRate = 24000;
  constexpr int kSamples = 3 * kRate;
  std::vector<float> samples(kSamples);
  double phase = 0;
  for (int i = 0; i < kSamples; ++i) {
    const double t = static_cast<double>(i) / kRate;
    const double f0 = 120 + 30 * std::sin(2 * std::numbers::pi * 0.7 * t);  // intonation
    phase += 2 * std::numbers::pi * f0 / kRate;
    double voiced = 0;
    for (int harmonic = 1; harmonic <= 8; ++harmonic)
      voiced += std::sin(harmonic * phase) / harmonic;
    const double syllables = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * 4 * t);
    samples[i] = static_cast<float>(0.18 * syllables * voiced);
  }
  // The server's own WAV writer (whole file, exact sizes); it cannot fail for 3 s of audio.
  audio::PcmEncoder encoder(audio::PcmEncoder::Container::kWav, kRate, /*streaming=*/false);
  std::string wav;
  (void)encoder.Encode(samples, &wav);
  (void)encoder.Finish(&wav);
  return wav;
}

}  // namespace voxserve::engine::cosyvoice
