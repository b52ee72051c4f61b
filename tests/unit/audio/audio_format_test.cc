#include "audio/audio_format.h"

#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"

namespace voxserve::audio {
namespace {

using ::testing::HasSubstr;

TEST(ParseAudioFormatTest, AcceptsEveryOpenAiName) {
  EXPECT_EQ(*ParseAudioFormat("mp3"), AudioFormat::kMp3);
  EXPECT_EQ(*ParseAudioFormat("opus"), AudioFormat::kOpus);
  EXPECT_EQ(*ParseAudioFormat("aac"), AudioFormat::kAac);
  EXPECT_EQ(*ParseAudioFormat("flac"), AudioFormat::kFlac);
  EXPECT_EQ(*ParseAudioFormat("wav"), AudioFormat::kWav);
  EXPECT_EQ(*ParseAudioFormat("pcm"), AudioFormat::kPcm);
}

TEST(ParseAudioFormatTest, RejectsOggAsUnsupportedResponseFormat) {
  absl::StatusOr<AudioFormat> format = ParseAudioFormat("ogg");
  ASSERT_EQ(format.status().code(), absl::StatusCode::kInvalidArgument);
  core::ErrorDetail detail = core::DetailOf(format.status());
  EXPECT_EQ(detail.param, "response_format");
  EXPECT_EQ(detail.code, "unsupported_response_format");
}

TEST(ParseAudioFormatTest, RejectsEmptyName) {
  absl::StatusOr<AudioFormat> format = ParseAudioFormat("");
  ASSERT_EQ(format.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(format.status()).param, "response_format");
}

TEST(ParseAudioFormatTest, NamesAreCaseSensitive) { EXPECT_FALSE(ParseAudioFormat("MP3").ok()); }

TEST(ParseAudioFormatTest, ErrorNamesEverySupportedFormat) {
  std::string message(ParseAudioFormat("ogg").status().message());
  EXPECT_THAT(message, HasSubstr("ogg"));
  EXPECT_THAT(message, HasSubstr("mp3, opus, aac, flac, wav, pcm"));
}

TEST(ParseAudioFormatTest, EchoesAHugeNameBounded) {
  std::string message(ParseAudioFormat(std::string(900'000, 'x')).status().message());
  EXPECT_LT(message.size(), 300u);
  EXPECT_THAT(message, HasSubstr("(900000 bytes)"));
}

TEST(FormatNameTest, RoundTripsThroughParse) {
  for (AudioFormat format : {AudioFormat::kMp3, AudioFormat::kOpus, AudioFormat::kAac,
                             AudioFormat::kFlac, AudioFormat::kWav, AudioFormat::kPcm}) {
    EXPECT_EQ(*ParseAudioFormat(FormatName(format)), format);
  }
}

TEST(ContentTypeTest, MatchesEachContainer) {
  EXPECT_EQ(ContentType(AudioFormat::kMp3), "audio/mpeg");
  EXPECT_EQ(ContentType(AudioFormat::kOpus), "audio/opus");
  EXPECT_EQ(ContentType(AudioFormat::kAac), "audio/aac");
  EXPECT_EQ(ContentType(AudioFormat::kFlac), "audio/flac");
  EXPECT_EQ(ContentType(AudioFormat::kWav), "audio/wav");
  EXPECT_EQ(ContentType(AudioFormat::kPcm), "audio/pcm");
}

TEST(OutputSampleRateTest, PcmIsAlways24kHz) {
  EXPECT_EQ(OutputSampleRate(AudioFormat::kPcm, 22050), 24000);
  EXPECT_EQ(OutputSampleRate(AudioFormat::kPcm, 48000), 24000);
}

TEST(OutputSampleRateTest, OpusIsAlways48kHz) {
  EXPECT_EQ(OutputSampleRate(AudioFormat::kOpus, 22050), 48000);
  EXPECT_EQ(OutputSampleRate(AudioFormat::kOpus, 16000), 48000);
}

TEST(OutputSampleRateTest, WavAndFlacKeepTheInputRate) {
  EXPECT_EQ(OutputSampleRate(AudioFormat::kWav, 22050), 22050);
  EXPECT_EQ(OutputSampleRate(AudioFormat::kFlac, 17000), 17000);
}

TEST(OutputSampleRateTest, Mp3KeepsRatesLayerIiiSupports) {
  for (int rate : {8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000}) {
    EXPECT_EQ(OutputSampleRate(AudioFormat::kMp3, rate), rate);
  }
}

TEST(OutputSampleRateTest, Mp3TakesTheNearestSupportedRate) {
  EXPECT_EQ(OutputSampleRate(AudioFormat::kMp3, 17000), 16000);
  EXPECT_EQ(OutputSampleRate(AudioFormat::kMp3, 20000), 22050);
  EXPECT_EQ(OutputSampleRate(AudioFormat::kMp3, 96000), 48000);
  EXPECT_EQ(OutputSampleRate(AudioFormat::kMp3, 7350), 8000);
}

TEST(OutputSampleRateTest, AacKeepsRatesOfItsTable) {
  for (int rate :
       {7350, 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000}) {
    EXPECT_EQ(OutputSampleRate(AudioFormat::kAac, rate), rate);
  }
}

TEST(OutputSampleRateTest, AacTakesTheNearestSupportedRate) {
  EXPECT_EQ(OutputSampleRate(AudioFormat::kAac, 17000), 16000);
  EXPECT_EQ(OutputSampleRate(AudioFormat::kAac, 192000), 96000);
}

TEST(ParseAudioFormatTest, AcceptsUlawAsTheTelephonyExtension) {
  EXPECT_EQ(*ParseAudioFormat("ulaw"), AudioFormat::kUlaw);
  EXPECT_EQ(ContentType(AudioFormat::kUlaw), "audio/basic");
  EXPECT_EQ(OutputSampleRate(AudioFormat::kUlaw, 22050), 8000);
}

TEST(ResolveOutputSampleRateTest, ZeroMeansTheFormatsOwnRate) {
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kPcm, 22050, 0), 24000);
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kWav, 22050, 0), 22050);
}

TEST(ResolveOutputSampleRateTest, VoiceRateKeepsTheEnginesRateForRawAndLosslessFormats) {
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kPcm, 22050, kVoiceSampleRate), 22050);
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kWav, 16000, kVoiceSampleRate), 16000);
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kFlac, 24000, kVoiceSampleRate), 24000);
  // Kept within what the formats take.
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kPcm, 96000, kVoiceSampleRate), 48000);
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kPcm, 4000, kVoiceSampleRate), 8000);
  // Formats with rates of their own keep them.
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kOpus, 22050, kVoiceSampleRate), 48000);
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kUlaw, 22050, kVoiceSampleRate), 8000);
}

TEST(ResolveOutputSampleRateTest, TakesTheRatesEachFormatCanCarry) {
  for (int rate : {8000, 16000, 22050, 44100, 48000}) {
    EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kPcm, 24000, rate), rate);
    EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kWav, 24000, rate), rate);
  }
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kMp3, 24000, 44100), 44100);
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kUlaw, 24000, 8000), 8000);
  EXPECT_EQ(*ResolveOutputSampleRate(AudioFormat::kOpus, 24000, 48000), 48000);
}

TEST(ResolveOutputSampleRateTest, RefusesOthersNamingSampleRate) {
  for (auto [format, rate] : {std::pair{AudioFormat::kPcm, 7999}, {AudioFormat::kPcm, 96000},
                              {AudioFormat::kUlaw, 16000}, {AudioFormat::kOpus, 24000},
                              {AudioFormat::kMp3, 44000}, {AudioFormat::kAac, 1}}) {
    auto resolved = ResolveOutputSampleRate(format, 24000, rate);
    ASSERT_FALSE(resolved.ok()) << FormatName(format) << " " << rate;
    EXPECT_EQ(core::DetailOf(resolved.status()).param, "sample_rate");
  }
}

}  // namespace
}  // namespace voxserve::audio
