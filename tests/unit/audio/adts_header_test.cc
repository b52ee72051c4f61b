#include "audio/adts_header.h"

#include <gtest/gtest.h>

#include <string>

namespace voxserve::audio {
namespace {

TEST(AdtsHeaderTest, EncodesRateIndexChannelsAndFrameLength) {
  std::string header;
  ASSERT_TRUE(AppendAdtsHeader(*AacSamplingFrequencyIndex(22050), 100, &header).ok());
  // 0xFFF1: sync, MPEG-4, no CRC; 0x5C: LC, index 7; 0x40: mono; frame length 107 = 0x06B;
  // buffer fullness 0x7FF; one raw data block.
  EXPECT_EQ(header, std::string("\xFF\xF1\x5C\x40\x0D\x7F\xFC", 7));
}

TEST(AdtsHeaderTest, RejectsFramesOverTheLengthField) {
  std::string header;
  EXPECT_FALSE(AppendAdtsHeader(7, 8185, &header).ok());
  EXPECT_TRUE(header.empty());
  EXPECT_TRUE(AppendAdtsHeader(7, 8184, &header).ok());
}

TEST(AacSamplingFrequencyIndexTest, KnowsTheTableAndNothingElse) {
  EXPECT_EQ(*AacSamplingFrequencyIndex(96000), 0);
  EXPECT_EQ(*AacSamplingFrequencyIndex(24000), 6);
  EXPECT_EQ(*AacSamplingFrequencyIndex(7350), 12);
  EXPECT_FALSE(AacSamplingFrequencyIndex(22000).ok());
}

}  // namespace
}  // namespace voxserve::audio
