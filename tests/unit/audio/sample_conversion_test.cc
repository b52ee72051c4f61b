#include "audio/sample_conversion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace voxserve::audio {
namespace {

TEST(FloatToInt16Test, ScalesFullScaleTo32767) {
  EXPECT_EQ(FloatToInt16(1.0f), 32767);
  EXPECT_EQ(FloatToInt16(-1.0f), -32767);
  EXPECT_EQ(FloatToInt16(0.0f), 0);
  EXPECT_EQ(FloatToInt16(0.5f), 16384);  // 16383.5 rounds to even
}

TEST(FloatToInt16Test, ClipsInsteadOfWrapping) {
  EXPECT_EQ(FloatToInt16(1.5f), 32767);
  EXPECT_EQ(FloatToInt16(-1.5f), -32768);
  EXPECT_EQ(FloatToInt16(std::numeric_limits<float>::infinity()), 32767);
  EXPECT_EQ(FloatToInt16(-std::numeric_limits<float>::infinity()), -32768);
}

TEST(FloatToInt16Test, MapsNanToSilence) {
  EXPECT_EQ(FloatToInt16(std::numeric_limits<float>::quiet_NaN()), 0);
}

TEST(AppendPcm16LeTest, WritesLittleEndianPairs) {
  std::string out = "x";
  std::vector<float> samples = {1.0f, -1.5f};
  AppendPcm16Le(samples, &out);
  EXPECT_EQ(out, std::string("x\xFF\x7F\x00\x80", 5));
}

// The definition FloatToInt16 had before it was made to vectorize: scale, clip, lrint.
std::int16_t ReferenceInt16(float sample) {
  if (std::isnan(sample)) return 0;
  return static_cast<std::int16_t>(std::lrint(std::clamp(sample * 32767.0f, -32768.0f, 32767.0f)));
}

TEST(AppendPcm16LeTest, MatchesScaleClipAndRoundHalfToEvenForEverySample) {
  // Every half step around zero and full scale (the ties lrint rounds to even), a sweep of the
  // whole range, out-of-range values, infinities and NaN; 3000 samples = 11 blocks and a tail.
  std::vector<float> samples;
  for (int i = -600; i <= 600; ++i) samples.push_back((i / 2.0f) / 32767.0f);
  for (int i = -600; i <= 600; ++i) samples.push_back((32767.0f + i / 2.0f) / 32767.0f - 0.018f);
  for (int i = 0; i < 591; ++i) samples.push_back(-2.5f + i * (5.0f / 591));
  samples.push_back(std::numeric_limits<float>::infinity());
  samples.push_back(-std::numeric_limits<float>::infinity());
  samples.push_back(std::numeric_limits<float>::quiet_NaN());
  samples.push_back(-std::numeric_limits<float>::quiet_NaN());
  samples.push_back(1.0f);
  samples.push_back(-1.0f);
  samples.push_back(std::numeric_limits<float>::denorm_min());
  ASSERT_EQ(samples.size(), 3000u);
  for (size_t length :
       {size_t{0}, size_t{1}, size_t{255}, size_t{256}, size_t{257}, size_t{3000}}) {
    std::string out = "ab";
    AppendPcm16Le(std::span<const float>(samples).last(length), &out);
    ASSERT_EQ(out.size(), 2 + 2 * length);
    for (size_t i = 0; i < length; ++i) {
      float sample = samples[samples.size() - length + i];
      auto bits = static_cast<std::uint16_t>(ReferenceInt16(sample));
      ASSERT_EQ(static_cast<unsigned char>(out[2 + 2 * i]), bits & 0xFF) << "sample " << sample;
      ASSERT_EQ(static_cast<unsigned char>(out[3 + 2 * i]), bits >> 8) << "sample " << sample;
    }
    EXPECT_EQ(out.substr(0, 2), "ab");
  }
}

// Every int16 value, from an odd offset (unaligned) and in a count that is no multiple of the
// conversion's block: each sample is value / 32768, in order.
TEST(Pcm16LeToFloatTest, GivesEveryValueOver32768FromAnyAlignment) {
  std::string bytes = "x";  // the samples start at an odd address
  for (int value = -32768; value <= 32767; ++value) {
    const auto bits = static_cast<std::uint16_t>(value);
    bytes += static_cast<char>(bits & 0xFF);
    bytes += static_cast<char>(bits >> 8);
  }
  // All but 32767: 65535 samples, a partial block at the end.
  const std::string_view odd = std::string_view(bytes).substr(1, bytes.size() - 3);
  ASSERT_NE(odd.size() / 2 % 256, 0u);
  std::vector<float> out(odd.size() / 2 + 1, 7.0f);
  Pcm16LeToFloat(odd, out.data());
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    ASSERT_EQ(out[i], static_cast<float>(static_cast<int>(i) - 32768) / 32768.0f) << i;
  }
  EXPECT_EQ(out.back(), 7.0f) << "wrote past the samples";
}

TEST(ClipToUnitRangeTest, ClipsAndSilencesNan) {
  std::vector<float> samples = {0.25f, 1.5f, -2.0f, std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> clipped;
  ClipToUnitRange(samples, &clipped);
  EXPECT_EQ(clipped, (std::vector<float>{0.25f, 1.0f, -1.0f, 0.0f}));
}

}  // namespace
}  // namespace voxserve::audio
