#include "audio/sample_conversion.h"

#include <gtest/gtest.h>

#include <limits>
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

TEST(ClipToUnitRangeTest, ClipsAndSilencesNan) {
  std::vector<float> samples = {0.25f, 1.5f, -2.0f, std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> clipped;
  ClipToUnitRange(samples, &clipped);
  EXPECT_EQ(clipped, (std::vector<float>{0.25f, 1.0f, -1.0f, 0.0f}));
}

}  // namespace
}  // namespace voxserve::audio
