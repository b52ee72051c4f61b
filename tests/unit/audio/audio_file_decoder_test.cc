// DecodeAudioFile: every accepted format decodes to the samples written, and every bad input
// (empty, garbage, truncated, oversized, a lying header) gets a clear error.
#include "audio/audio_file_decoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sndfile.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "audio/sndfile_memory_output.h"
#include "unit/audio/audio_test_support.h"

namespace voxserve::audio {
namespace {

using ::testing::HasSubstr;

// `frames` x `channels` interleaved samples written by libsndfile into memory.
std::string Encode(const std::vector<float>& interleaved, int channels, int rate, int format) {
  SndfileMemoryOutput output;
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = format;
  SNDFILE* file = sf_open_virtual(SndfileMemoryOutput::VirtualIo(), SFM_WRITE, &info, &output);
  EXPECT_NE(file, nullptr) << sf_strerror(nullptr);
  if (file == nullptr) return {};
  sf_command(file, SFC_SET_CLIPPING, nullptr, SF_TRUE);
  sf_writef_float(file, interleaved.data(), static_cast<sf_count_t>(interleaved.size() / channels));
  sf_close(file);
  std::string bytes;
  output.TakeBytes(&bytes);
  return bytes;
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::vector<float> Tone(int rate, double seconds) {
  return testing::Sine(440.0, rate, seconds, 0.5f);
}

double MaxDifference(std::span<const float> a, std::span<const float> b) {
  double worst = 0.0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  return worst;
}

struct PcmCase {
  const char* name;
  int format;
  double tolerance;  // one quantization step of the subtype
};

class LosslessDecodeTest : public ::testing::TestWithParam<PcmCase> {};

TEST_P(LosslessDecodeTest, ReturnsTheSamplesWritten) {
  std::vector<float> tone = Tone(22050, 0.5);
  auto audio = DecodeAudioFile(Bytes(Encode(tone, 1, 22050, GetParam().format)));
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->sample_rate, 22050);
  ASSERT_EQ(audio->samples.size(), tone.size());
  EXPECT_LE(MaxDifference(audio->samples, tone), GetParam().tolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, LosslessDecodeTest,
    ::testing::Values(PcmCase{"wav16", SF_FORMAT_WAV | SF_FORMAT_PCM_16, 1.0 / 32768},
                      PcmCase{"wav24", SF_FORMAT_WAV | SF_FORMAT_PCM_24, 1.0 / 8388608},
                      PcmCase{"wav32", SF_FORMAT_WAV | SF_FORMAT_PCM_32, 1e-7},
                      PcmCase{"wavfloat", SF_FORMAT_WAV | SF_FORMAT_FLOAT, 0.0},
                      PcmCase{"flac16", SF_FORMAT_FLAC | SF_FORMAT_PCM_16, 1.0 / 32768},
                      PcmCase{"flac24", SF_FORMAT_FLAC | SF_FORMAT_PCM_24, 1.0 / 8388608},
                      PcmCase{"aiff16", SF_FORMAT_AIFF | SF_FORMAT_PCM_16, 1.0 / 32768}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(AudioFileDecoderTest, MixesStereoToTheMeanOfItsChannels) {
  std::vector<float> tone = Tone(16000, 0.25);
  std::vector<float> stereo;
  for (float sample : tone) {
    stereo.push_back(sample);
    stereo.push_back(-0.25f);
  }
  auto audio = DecodeAudioFile(Bytes(Encode(stereo, 2, 16000, SF_FORMAT_WAV | SF_FORMAT_FLOAT)));
  ASSERT_TRUE(audio.ok()) << audio.status();
  ASSERT_EQ(audio->samples.size(), tone.size());
  for (std::size_t i = 0; i < tone.size(); i += 97) {
    EXPECT_FLOAT_EQ(audio->samples[i], (tone[i] - 0.25f) / 2) << i;
  }
}

struct LossyCase {
  const char* name;
  int format;
  int rate;
};

class LossyDecodeTest : public ::testing::TestWithParam<LossyCase> {};

// Lossy codecs add priming and padding and change the waveform, so the test checks what they
// keep: the rate, the length (within 0.1 s), the level and the pitch.
TEST_P(LossyDecodeTest, KeepsRateLengthLevelAndPitch) {
  const int rate = GetParam().rate;
  std::vector<float> tone = Tone(rate, 1.0);
  auto audio = DecodeAudioFile(Bytes(Encode(tone, 1, rate, GetParam().format)));
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->sample_rate, rate);
  EXPECT_NEAR(audio->DurationSeconds(), 1.0, 0.1);
  auto middle = testing::Middle(audio->samples, rate, 0.5);
  EXPECT_NEAR(testing::Rms(middle), 0.5 / std::numbers::sqrt2, 0.05);
  EXPECT_NEAR(testing::ZeroCrossingFrequency(middle, rate), 440.0, 10.0);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, LossyDecodeTest,
    ::testing::Values(LossyCase{"vorbis", SF_FORMAT_OGG | SF_FORMAT_VORBIS, 22050},
                      LossyCase{"opus", SF_FORMAT_OGG | SF_FORMAT_OPUS, 48000},
                      LossyCase{"mp3", SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III, 24000}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(AudioFileDecoderTest, RefusesEmptyInput) {
  auto audio = DecodeAudioFile({});
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(audio.status().message(), HasSubstr("empty"));
}

TEST(AudioFileDecoderTest, RefusesGarbage) {
  std::mt19937 random(1);
  std::string noise(4096, '\0');
  for (char& c : noise) c = static_cast<char>(random());
  for (const std::string& bytes :
       {noise, std::string("hello, this is not audio"), std::string("RIFF\x10\0\0\0WAVE", 12)}) {
    auto audio = DecodeAudioFile(Bytes(bytes));
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << audio.status();
  }
}

TEST(AudioFileDecoderTest, RefusesAHeaderWithoutSamples) {
  std::string wav = Encode(Tone(16000, 0.5), 1, 16000, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
  auto audio = DecodeAudioFile(Bytes(wav.substr(0, 44)));  // the 44-byte header alone
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << audio.status();
}

TEST(AudioFileDecoderTest, RefusesTruncatedFiles) {
  std::vector<float> tone = Tone(16000, 1.0);
  for (int format : {SF_FORMAT_WAV | SF_FORMAT_PCM_16, SF_FORMAT_FLAC | SF_FORMAT_PCM_16,
                     SF_FORMAT_OGG | SF_FORMAT_VORBIS}) {
    std::string bytes = Encode(tone, 1, 16000, format);
    for (std::size_t keep : {std::size_t{12}, std::size_t{30}}) {
      auto audio = DecodeAudioFile(Bytes(bytes.substr(0, keep)));
      EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument)
          << std::hex << format << " cut to " << keep << ": " << audio.status();
    }
  }
  // FLAC says its length up front: a stream cut short is an error, not shorter audio.
  std::string flac = Encode(tone, 1, 16000, SF_FORMAT_FLAC | SF_FORMAT_PCM_16);
  auto audio = DecodeAudioFile(Bytes(flac.substr(0, flac.size() / 2)));
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << audio.status();
  EXPECT_THAT(audio.status().message(), HasSubstr("truncated"));
}

// libsndfile 1.2.0 leaks libvorbis's setup when Vorbis headers fail to parse; the decoder
// checks them first (ogg_vorbis_headers.h). Under LeakSanitizer this test fails at exit if a
// cut or corrupt header reaches libsndfile again.
TEST(AudioFileDecoderTest, RefusesIncompleteOrCorruptVorbisHeadersWithoutLeaking) {
  std::string ogg = Encode(Tone(16000, 0.5), 1, 16000, SF_FORMAT_OGG | SF_FORMAT_VORBIS);
  ASSERT_EQ(ogg.substr(0, 4), "OggS");
  // The first page (27-byte header, lacing table, the identification packet) ends here.
  const auto segments = static_cast<uint8_t>(ogg[26]);
  std::size_t first_page = 27 + segments;
  for (std::size_t i = 0; i < segments; ++i) first_page += static_cast<uint8_t>(ogg[27 + i]);
  for (std::size_t cut : {first_page, first_page + 40, first_page + 400}) {
    auto audio = DecodeAudioFile(Bytes(ogg.substr(0, cut)));
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << cut;
    EXPECT_THAT(audio.status().message(), HasSubstr("Vorbis headers")) << cut;
  }
}

// A FLAC header claiming 2^36 - 1 samples (25 days at 32 kHz) in a file of a few kilobytes:
// refused at once, without allocating for the claim.
TEST(AudioFileDecoderTest, RefusesAHeaderClaimingHoursOfAudio) {
  std::string flac = Encode(Tone(16000, 0.2), 1, 16000, SF_FORMAT_FLAC | SF_FORMAT_PCM_16);
  ASSERT_EQ(flac.substr(0, 4), "fLaC");
  // STREAMINFO starts at byte 8; its 36-bit total-samples field ends the 64 bits at byte 18
  // (after 20 bits of rate, 3 of channels and 5 of bits per sample).
  flac[21] = static_cast<char>(flac[21] | 0x0f);
  for (int i = 22; i < 26; ++i) flac[i] = static_cast<char>(0xff);
  auto audio = DecodeAudioFile(Bytes(flac));
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kOutOfRange) << audio.status();
  EXPECT_THAT(audio.status().message(), HasSubstr("60 s"));
}

// A WAV whose data chunk claims 4 GiB holds only what the file holds.
TEST(AudioFileDecoderTest, DecodesOnlyTheBytesPresentBehindAnOversizedWavChunk) {
  std::vector<float> tone = Tone(16000, 0.5);
  std::string wav = Encode(tone, 1, 16000, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
  ASSERT_EQ(wav.substr(36, 4), "data");
  std::memset(wav.data() + 40, 0xff, 4);
  auto audio = DecodeAudioFile(Bytes(wav));
  ASSERT_TRUE(audio.ok()) << audio.status();
  EXPECT_EQ(audio->samples.size(), tone.size());
}

TEST(AudioFileDecoderTest, RefusesAudioLongerThanTheLimitNamingIt) {
  DecodeLimits limits;
  limits.max_seconds = 2.0;
  for (int format : {SF_FORMAT_WAV | SF_FORMAT_PCM_16, SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III,
                     SF_FORMAT_OGG | SF_FORMAT_VORBIS}) {
    auto audio = DecodeAudioFile(Bytes(Encode(Tone(16000, 3.0), 1, 16000, format)), limits);
    EXPECT_EQ(audio.status().code(), absl::StatusCode::kOutOfRange) << std::hex << format;
    EXPECT_THAT(audio.status().message(), HasSubstr("limit of 2 s"));
  }
  auto under = DecodeAudioFile(
      Bytes(Encode(Tone(16000, 1.5), 1, 16000, SF_FORMAT_WAV | SF_FORMAT_PCM_16)), limits);
  EXPECT_TRUE(under.ok()) << under.status();
}

TEST(AudioFileDecoderTest, RefusesTooManyChannels) {
  std::vector<float> interleaved(16 * 1600, 0.1f);
  auto audio =
      DecodeAudioFile(Bytes(Encode(interleaved, 16, 16000, SF_FORMAT_WAV | SF_FORMAT_PCM_16)));
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kOutOfRange) << audio.status();
  EXPECT_THAT(audio.status().message(), HasSubstr("16 channels"));
}

TEST(AudioFileDecoderTest, RefusesNonFiniteSamples) {
  std::vector<float> tone = Tone(16000, 0.1);
  tone[100] = std::numeric_limits<float>::quiet_NaN();
  auto audio = DecodeAudioFile(Bytes(Encode(tone, 1, 16000, SF_FORMAT_WAV | SF_FORMAT_FLOAT)));
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << audio.status();
  EXPECT_THAT(audio.status().message(), HasSubstr("non-finite"));
}

TEST(AudioFileDecoderTest, RefusesContainersOutsideTheAcceptedList) {
  auto audio =
      DecodeAudioFile(Bytes(Encode(Tone(16000, 0.1), 1, 16000, SF_FORMAT_AU | SF_FORMAT_PCM_16)));
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument) << audio.status();
  EXPECT_THAT(audio.status().message(), HasSubstr("not accepted"));
}

}  // namespace
}  // namespace voxserve::audio
