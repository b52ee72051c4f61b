// Float samples to what codecs take (clipped floats, 16-bit little-endian PCM), and 16-bit PCM
// to floats.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace voxserve::audio {

// Scales [-1, 1] to int16 (x 32767, as libsndfile does) and clips what lies outside, so 1.5
// becomes 32767 rather than wrapping to a negative value. NaN becomes 0.
std::int16_t FloatToInt16(float sample);

// Appends each sample as FloatToInt16 little-endian bytes.
void AppendPcm16Le(std::span<const float> samples, std::string* out);

// 16-bit little-endian PCM (`bytes`, two per sample, any alignment) as floats (/ 32768) into
// `out`, which holds bytes.size() / 2 samples.
void Pcm16LeToFloat(std::string_view bytes, float* out);

// Replaces *out with `samples` clipped to [-1, 1], NaN as 0: lossy codecs take floats, and a
// NaN or an out-of-range peak would otherwise reach their internal state.
void ClipToUnitRange(std::span<const float> samples, std::vector<float>* out);

}  // namespace voxserve::audio
