#include "audio/resampler.h"

#include <gtest/gtest.h>

#include <vector>

#include "unit/audio/audio_test_support.h"

namespace voxserve::audio {
namespace {

using testing::Middle;
using testing::Sine;
using testing::ZeroCrossingFrequency;

std::vector<float> ResampleInChunks(const std::vector<float>& input, int from, int to,
                                    std::size_t chunk) {
  auto resampler = Resampler::Create(from, to);
  EXPECT_TRUE(resampler.ok()) << resampler.status();
  std::vector<float> out;
  for (std::size_t offset = 0; offset < input.size(); offset += chunk) {
    std::size_t count = std::min(chunk, input.size() - offset);
    EXPECT_TRUE((*resampler)->Process(std::span(input).subspan(offset, count), &out).ok());
  }
  EXPECT_TRUE((*resampler)->Flush(&out).ok());
  return out;
}

TEST(ResamplerTest, OutputLengthFollowsTheRatio) {
  std::vector<float> sine = Sine(440, 22050, 1.0);
  EXPECT_EQ(ResampleInChunks(sine, 22050, 48000, 4000).size(), 48000u);
  EXPECT_EQ(ResampleInChunks(sine, 22050, 16000, 4000).size(), 16000u);
}

TEST(ResamplerTest, KeepsTheFrequency) {
  std::vector<float> out = ResampleInChunks(Sine(440, 22050, 1.0), 22050, 48000, 4000);
  EXPECT_NEAR(ZeroCrossingFrequency(Middle(out, 48000, 0.5), 48000), 440, 10);
}

TEST(ResamplerTest, ChunkingDoesNotChangeTheOutput) {
  std::vector<float> sine = Sine(440, 22050, 0.5);
  std::vector<float> whole = ResampleInChunks(sine, 22050, 24000, sine.size());
  std::vector<float> chunked = ResampleInChunks(sine, 22050, 24000, 333);
  ASSERT_EQ(whole.size(), chunked.size());
  for (std::size_t i = 0; i < whole.size(); ++i) ASSERT_NEAR(whole[i], chunked[i], 1e-6) << i;
}

TEST(ResamplerTest, EmptyChunkIsNotEndOfInput) {
  auto resampler = Resampler::Create(22050, 24000);
  ASSERT_TRUE(resampler.ok());
  std::vector<float> sine = Sine(440, 22050, 0.1);
  std::vector<float> out;
  ASSERT_TRUE((*resampler)->Process({}, &out).ok());
  ASSERT_TRUE((*resampler)->Process(sine, &out).ok());
  ASSERT_TRUE((*resampler)->Flush(&out).ok());
  EXPECT_EQ(out.size(), 2400u);
}

TEST(ResamplerTest, RejectsNonPositiveRates) {
  EXPECT_EQ(Resampler::Create(0, 24000).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ResamplerTest, ProcessAfterFlushFails) {
  auto resampler = Resampler::Create(22050, 24000);
  ASSERT_TRUE(resampler.ok());
  std::vector<float> out;
  ASSERT_TRUE((*resampler)->Flush(&out).ok());
  std::vector<float> samples(10, 0.0f);
  EXPECT_EQ((*resampler)->Process(samples, &out).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace voxserve::audio
