#include "audio/sample_conversion.h"

#include <algorithm>
#include <cmath>

namespace voxserve::audio {

std::int16_t FloatToInt16(float sample) {
  if (std::isnan(sample)) return 0;
  // Clip after scaling, so the full int16 range stays reachable (-1.5 → -32768).
  float scaled = std::clamp(sample * 32767.0f, -32768.0f, 32767.0f);
  return static_cast<std::int16_t>(std::lrint(scaled));
}

void AppendPcm16Le(std::span<const float> samples, std::string* out) {
  std::size_t offset = out->size();
  out->resize(offset + 2 * samples.size());
  for (float sample : samples) {
    auto bits = static_cast<std::uint16_t>(FloatToInt16(sample));
    (*out)[offset++] = static_cast<char>(bits & 0xFF);
    (*out)[offset++] = static_cast<char>(bits >> 8);
  }
}

void ClipToUnitRange(std::span<const float> samples, std::vector<float>* out) {
  out->resize(samples.size());
  std::transform(samples.begin(), samples.end(), out->begin(), [](float sample) {
    return std::isnan(sample) ? 0.0f : std::clamp(sample, -1.0f, 1.0f);
  });
}

}  // namespace voxserve::audio
