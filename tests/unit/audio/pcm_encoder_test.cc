// Raw pcm and WAV, through CreateEncoder as the service uses them.
#include "audio/pcm_encoder.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "audio/encoder.h"
#include "unit/audio/audio_test_support.h"

namespace voxserve::audio {
namespace {

using testing::Sine;

std::uint32_t U32At(const std::string& bytes, std::size_t offset) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | static_cast<std::uint8_t>(bytes[offset + i]);
  return value;
}

std::vector<std::int16_t> Int16Samples(std::string_view bytes) {
  std::vector<std::int16_t> samples(bytes.size() / 2);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    samples[i] = static_cast<std::int16_t>(static_cast<std::uint8_t>(bytes[2 * i]) |
                                           (static_cast<std::uint8_t>(bytes[2 * i + 1]) << 8));
  }
  return samples;
}

std::unique_ptr<AudioEncoder> MakeEncoder(AudioFormat format, int rate, bool streaming) {
  auto encoder =
      CreateEncoder({.format = format, .input_sample_rate = rate, .streaming = streaming});
  EXPECT_TRUE(encoder.ok()) << encoder.status();
  return encoder.ok() ? std::move(*encoder) : nullptr;
}

TEST(PcmEncoderTest, RawPcmIs16BitLittleEndianAt24kHzWithTheResampledCount) {
  auto encoder = MakeEncoder(AudioFormat::kPcm, 22050, /*streaming=*/false);
  std::vector<float> sine = Sine(440, 22050, 1.0);
  std::string bytes;
  ASSERT_TRUE(encoder->Encode(std::span(sine).first(10000), &bytes).ok());
  ASSERT_TRUE(encoder->Encode(std::span(sine).subspan(10000), &bytes).ok());
  ASSERT_TRUE(encoder->Finish(&bytes).ok());
  // One second at 22050 Hz is one second at 24 kHz: 24000 samples of two bytes, no header.
  EXPECT_EQ(bytes.size(), 2u * 24000u);
  std::vector<std::int16_t> samples = Int16Samples(bytes);
  auto [low, high] = std::minmax_element(samples.begin() + 1000, samples.end() - 1000);
  EXPECT_NEAR(*high, 0.5 * 32767, 200);
  EXPECT_NEAR(*low, -0.5 * 32767, 200);
}

TEST(PcmEncoderTest, RawPcmClipsOutOfRangeSamples) {
  auto encoder = MakeEncoder(AudioFormat::kPcm, 24000, /*streaming=*/true);
  std::vector<float> samples = {1.5f, -1.5f, 1.0f, 0.0f};
  std::string bytes;
  ASSERT_TRUE(encoder->Encode(samples, &bytes).ok());
  ASSERT_TRUE(encoder->Finish(&bytes).ok());
  EXPECT_EQ(Int16Samples(bytes), (std::vector<std::int16_t>{32767, -32768, 32767, 0}));
}

TEST(PcmEncoderTest, WavClipsOutOfRangeSamples) {
  auto encoder = MakeEncoder(AudioFormat::kWav, 16000, /*streaming=*/false);
  std::vector<float> samples = {1.5f, -1.5f};
  std::string bytes;
  ASSERT_TRUE(encoder->Encode(samples, &bytes).ok());
  ASSERT_TRUE(encoder->Finish(&bytes).ok());
  ASSERT_EQ(bytes.size(), 48u);
  EXPECT_EQ(Int16Samples(std::string_view(bytes).substr(44)),
            (std::vector<std::int16_t>{32767, -32768}));
}

TEST(PcmEncoderTest, NonStreamingWavHeaderHasExactSizes) {
  auto encoder = MakeEncoder(AudioFormat::kWav, 22050, /*streaming=*/false);
  std::vector<float> sine = Sine(440, 22050, 1.0);
  std::string bytes;
  ASSERT_TRUE(encoder->Encode(std::span(sine).first(5000), &bytes).ok());
  ASSERT_TRUE(encoder->Encode(std::span(sine).subspan(5000), &bytes).ok());
  EXPECT_TRUE(bytes.empty()) << "a non-streaming encoder emits only in Finish";
  ASSERT_TRUE(encoder->Finish(&bytes).ok());

  ASSERT_EQ(bytes.size(), 44u + 2u * 22050u);
  EXPECT_EQ(bytes.substr(0, 4), "RIFF");
  EXPECT_EQ(U32At(bytes, 4), bytes.size() - 8);
  EXPECT_EQ(bytes.substr(8, 8), "WAVEfmt ");
  EXPECT_EQ(U32At(bytes, 24), 22050u);
  EXPECT_EQ(bytes.substr(36, 4), "data");
  EXPECT_EQ(U32At(bytes, 40), 2u * 22050u);
}

TEST(PcmEncoderTest, StreamingWavHeaderComesWithTheFirstEncode) {
  auto encoder = MakeEncoder(AudioFormat::kWav, 22050, /*streaming=*/true);
  std::vector<float> samples(100, 0.25f);
  std::string first;
  ASSERT_TRUE(encoder->Encode(samples, &first).ok());
  ASSERT_EQ(first.size(), 44u + 200u);
  EXPECT_EQ(first.substr(0, 4), "RIFF");
  EXPECT_EQ(U32At(first, 4), 0xFFFFFFFFu);
  EXPECT_EQ(first.substr(36, 4), "data");
  EXPECT_EQ(U32At(first, 40), 0xFFFFFFFFu);

  std::string second;
  ASSERT_TRUE(encoder->Encode(samples, &second).ok());
  EXPECT_EQ(second.size(), 200u) << "the header is written once";
  std::string rest;
  ASSERT_TRUE(encoder->Finish(&rest).ok());
  EXPECT_TRUE(rest.empty());
}

TEST(PcmEncoderTest, StreamingWavWithoutSamplesIsStillAHeader) {
  auto encoder = MakeEncoder(AudioFormat::kWav, 22050, /*streaming=*/true);
  std::string bytes;
  ASSERT_TRUE(encoder->Finish(&bytes).ok());
  EXPECT_EQ(bytes, WavHeader(22050, std::nullopt));
}

TEST(PcmEncoderTest, EncodeAfterFinishFails) {
  auto encoder = MakeEncoder(AudioFormat::kPcm, 24000, /*streaming=*/true);
  std::string bytes;
  ASSERT_TRUE(encoder->Finish(&bytes).ok());
  std::vector<float> samples(10, 0.0f);
  EXPECT_EQ(encoder->Encode(samples, &bytes).code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace voxserve::audio
