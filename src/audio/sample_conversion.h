// Float samples to what codecs take: clipped floats and 16-bit little-endian PCM.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace voxserve::audio {

// Scales [-1, 1] to int16 (x 32767, as libsndfile does) and clips what lies outside, so 1.5
// becomes 32767 rather than wrapping to a negative value. NaN becomes 0.
std::int16_t FloatToInt16(float sample);

// Appends each sample as FloatToInt16 little-endian bytes.
void AppendPcm16Le(std::span<const float> samples, std::string* out);

// Replaces *out with `samples` clipped to [-1, 1], NaN as 0: lossy codecs take floats, and a
// NaN or an out-of-range peak would otherwise reach their internal state.
void ClipToUnitRange(std::span<const float> samples, std::vector<float>* out);

}  // namespace voxserve::audio
