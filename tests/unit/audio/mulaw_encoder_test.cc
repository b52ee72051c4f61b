#include "audio/mulaw_encoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "audio/encoder.h"

namespace voxserve::audio {
namespace {

// The G.711 mu-law expansion (ITU-T G.711 table 2a; G.191's ulaw_expand), written here as the
// decoder the encoder must agree with.
int MulawToLinear(std::uint8_t code) {
  int inverted = ~code & 0xFF;
  int segment = (inverted >> 4) & 0x07;
  int mantissa = inverted & 0x0F;
  int magnitude = (((mantissa << 3) + 0x84) << segment) - 0x84;
  return (inverted & 0x80) ? -magnitude : magnitude;
}

TEST(LinearToMulawTest, MatchesG711AtTheEndsAndAroundZero) {
  EXPECT_EQ(LinearToMulaw(0), 0xFF);
  EXPECT_EQ(LinearToMulaw(-1), 0x7F);  // G.191: -1 shares zero's step
  EXPECT_EQ(LinearToMulaw(32767), 0x80);
  EXPECT_EQ(LinearToMulaw(-32768), 0x00);
  // The first segment boundary (Sun's g711.c: 123 + bias 132 = 255 is the last of segment 0).
  EXPECT_EQ(LinearToMulaw(123), 0xF0);
  EXPECT_EQ(LinearToMulaw(124), 0xEF);
  EXPECT_EQ(LinearToMulaw(-124), 0x70);  // one's complement: -124 is magnitude 123
  EXPECT_EQ(LinearToMulaw(-125), 0x6F);
}

TEST(LinearToMulawTest, EverySampleDecodesToWithinHalfAStep) {
  for (int x = std::numeric_limits<std::int16_t>::min();
       x <= std::numeric_limits<std::int16_t>::max(); ++x) {
    int decoded = MulawToLinear(LinearToMulaw(static_cast<std::int16_t>(x)));
    // Half a step is at most 1/16 of the magnitude plus 8 (the bias makes low segments coarse;
    // negatives are one off, by the one's complement); beyond the largest
    // code, 32124, samples clip.
    int clipped = std::clamp(x, -32124, 32124);
    ASSERT_LE(std::abs(decoded - clipped), std::abs(clipped) / 16 + 9) << "x=" << x;
  }
}

TEST(LinearToMulawTest, IsMonotonic) {
  int previous = MulawToLinear(LinearToMulaw(std::numeric_limits<std::int16_t>::min()));
  for (int x = std::numeric_limits<std::int16_t>::min() + 1;
       x <= std::numeric_limits<std::int16_t>::max(); ++x) {
    int decoded = MulawToLinear(LinearToMulaw(static_cast<std::int16_t>(x)));
    ASSERT_GE(decoded, previous) << "x=" << x;
    previous = decoded;
  }
}

TEST(MulawEncoderTest, EmitsOneBytePerSampleAt8kHzFromAnyRate) {
  auto encoder = CreateEncoder({AudioFormat::kUlaw, 24000, /*streaming=*/false});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  std::vector<float> second(24000, 0.25f);
  std::string out;
  ASSERT_TRUE((*encoder)->Encode(second, &out).ok());
  ASSERT_TRUE((*encoder)->Finish(&out).ok());
  // 24 kHz → 8 kHz: a second of audio is 8000 bytes, give or take the resampler's edges.
  EXPECT_NEAR(static_cast<double>(out.size()), 8000.0, 40.0);
  EXPECT_EQ(static_cast<std::uint8_t>(out[out.size() / 2]), LinearToMulaw(8192));
}

TEST(MulawEncoderTest, RefusesEncodeAfterFinish) {
  MulawEncoder encoder;
  std::string out;
  ASSERT_TRUE(encoder.Finish(&out).ok());
  std::vector<float> samples(4, 0.0f);
  EXPECT_FALSE(encoder.Encode(samples, &out).ok());
  EXPECT_FALSE(encoder.Finish(&out).ok());
}

}  // namespace
}  // namespace voxserve::audio
