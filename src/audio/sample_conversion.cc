#include "audio/sample_conversion.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace voxserve::audio {
namespace {

// FloatToInt16 without a library call or a branch, so that a loop over it vectorizes: lrint()
// is a call into libm at -O2 (it may set errno), and that call per sample was the largest
// serving cost of a WAV response in perf (bench/RESULTS.md, issue 11 profile).
// Adding and subtracting 1.5 x 2^23 rounds a float of magnitude below 2^22 to an integer in the
// current rounding mode (round half to even by default), exactly as lrint does; the clamp
// before it keeps every value in that range. NaN compares unequal to itself and becomes 0.
inline std::int16_t ToInt16(float sample) {
  constexpr float kRound = 12582912.0f;  // 1.5 x 2^23
  float scaled = sample * 32767.0f;
  scaled = scaled > 32767.0f ? 32767.0f : scaled;
  scaled = scaled < -32768.0f ? -32768.0f : scaled;
  scaled = scaled == scaled ? scaled : 0.0f;
  scaled = (scaled + kRound) - kRound;
  return static_cast<std::int16_t>(static_cast<std::int32_t>(scaled));
}

// Samples per block: a fixed trip count lets GCC's -O2 vectorizer (its "very cheap" cost
// model takes only loops whose count is a multiple of the vector width) convert a block at
// a time; 256 keeps both buffers on the stack in one page. The file is built with
// -fno-trapping-math (CMakeLists.txt), without which the clamps stay branches.
constexpr std::size_t kBlock = 256;

void ConvertBlock(const float* in, std::int16_t* out) {
  for (std::size_t i = 0; i < kBlock; ++i) out[i] = ToInt16(in[i]);
}

void ConvertBlock(const std::int16_t* in, float* out) {
  for (std::size_t i = 0; i < kBlock; ++i) out[i] = static_cast<float>(in[i]) * (1.0f / 32768.0f);
}

}  // namespace

std::int16_t FloatToInt16(float sample) { return ToInt16(sample); }

void AppendPcm16Le(std::span<const float> samples, std::string* out) {
  std::size_t offset = out->size();
  out->resize(offset + 2 * samples.size());
  char* bytes = out->data() + offset;
  if constexpr (std::endian::native != std::endian::little) {
    for (float sample : samples) {
      auto bits = static_cast<std::uint16_t>(ToInt16(sample));
      *bytes++ = static_cast<char>(bits & 0xFF);
      *bytes++ = static_cast<char>(bits >> 8);
    }
    return;
  }
  std::int16_t converted[kBlock];
  std::size_t done = 0;
  for (; done + kBlock <= samples.size(); done += kBlock) {
    ConvertBlock(samples.data() + done, converted);
    std::memcpy(bytes + 2 * done, converted, sizeof converted);
  }
  if (done < samples.size()) {
    float tail[kBlock] = {};
    const std::size_t left = samples.size() - done;
    std::copy_n(samples.data() + done, left, tail);
    ConvertBlock(tail, converted);
    std::memcpy(bytes + 2 * done, converted, 2 * left);
  }
}

void Pcm16LeToFloat(std::string_view bytes, float* out) {
  const std::size_t count = bytes.size() / 2;
  if constexpr (std::endian::native != std::endian::little) {
    for (std::size_t i = 0; i < count; ++i) {
      const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + 2 * i);
      out[i] = static_cast<float>(static_cast<std::int16_t>(b[0] | (b[1] << 8))) / 32768.0f;
    }
    return;
  }
  std::int16_t block[kBlock];  // aligned, for the vectorized loop
  for (std::size_t done = 0; done < count; done += kBlock) {
    const std::size_t n = std::min(kBlock, count - done);
    std::memcpy(block, bytes.data() + 2 * done, 2 * n);
    if (n == kBlock) {
      ConvertBlock(block, out + done);
    } else {
      std::fill(block + n, block + kBlock, std::int16_t{0});
      float tail[kBlock];
      ConvertBlock(block, tail);
      std::copy_n(tail, n, out + done);
    }
  }
}

void ClipToUnitRange(std::span<const float> samples, std::vector<float>* out) {
  out->resize(samples.size());
  std::transform(samples.begin(), samples.end(), out->begin(), [](float sample) {
    return std::isnan(sample) ? 0.0f : std::clamp(sample, -1.0f, 1.0f);
  });
}

}  // namespace voxserve::audio
