// Every format, streaming and not: encode a 440 Hz tone fed in chunks, decode the bytes with a
// real decoder (libsndfile; libavcodec for AAC) and check what comes back.
#include <gtest/gtest.h>
#include <sndfile.h>

#include <ostream>
#include <string>
#include <vector>

#include "audio/encoder.h"
#include "unit/audio/audio_test_support.h"

namespace voxserve::audio {
namespace {

using testing::DecodedAudio;
using testing::Middle;
using testing::Rms;
using testing::Sine;
using testing::ZeroCrossingFrequency;

constexpr int kInputRate = 22050;
constexpr double kToneHz = 440.0;
constexpr double kSeconds = 1.0;
constexpr std::size_t kChunk = 5513;  // four chunks a second, none aligned to a codec frame

struct FormatCase {
  AudioFormat format;
  bool streaming;
  // What the decoder may add beyond the input's duration: encoder priming and padding to whole
  // frames (and, for streamed MP3, the blank Info frame; see sndfile_memory_output.cc).
  double max_extra_seconds;
};

std::string Name(const FormatCase& c) {
  return std::string(FormatName(c.format)) + (c.streaming ? "_streaming" : "_whole");
}
std::string ParamName(const ::testing::TestParamInfo<FormatCase>& info) { return Name(info.param); }
void PrintTo(const FormatCase& c, std::ostream* os) { *os << Name(c); }

struct Encoded {
  std::string bytes;
  std::size_t bytes_before_finish = 0;
};

Encoded EncodeTone(const FormatCase& c) {
  auto encoder = CreateEncoder(
      {.format = c.format, .input_sample_rate = kInputRate, .streaming = c.streaming});
  EXPECT_TRUE(encoder.ok()) << encoder.status();
  if (!encoder.ok()) return {};
  std::vector<float> tone = Sine(kToneHz, kInputRate, kSeconds);
  Encoded encoded;
  for (std::size_t offset = 0; offset < tone.size(); offset += kChunk) {
    std::size_t count = std::min(kChunk, tone.size() - offset);
    absl::Status status =
        (*encoder)->Encode(std::span(tone).subspan(offset, count), &encoded.bytes);
    EXPECT_TRUE(status.ok()) << status;
  }
  encoded.bytes_before_finish = encoded.bytes.size();
  absl::Status status = (*encoder)->Finish(&encoded.bytes);
  EXPECT_TRUE(status.ok()) << status;
  return encoded;
}

absl::StatusOr<DecodedAudio> Decode(AudioFormat format, const std::string& bytes) {
  if (format == AudioFormat::kAac) return testing::DecodeAdts(bytes);
  if (format != AudioFormat::kPcm) return testing::DecodeWithSndfile(bytes);
  // Raw pcm has no header; libsndfile reads it given the facts.
  auto path = ::testing::TempDir() + "/round_trip.pcm";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size(), file);
  std::fclose(file);
  SF_INFO info = {.frames = 0,
                  .samplerate = 24000,
                  .channels = 1,
                  .format = SF_FORMAT_RAW | SF_FORMAT_PCM_16 | SF_ENDIAN_LITTLE};
  SNDFILE* sndfile = sf_open(path.c_str(), SFM_READ, &info);
  if (sndfile == nullptr) return absl::InternalError(sf_strerror(nullptr));
  DecodedAudio decoded{info.format, info.samplerate, info.channels,
                       std::vector<float>(static_cast<std::size_t>(info.frames))};
  decoded.samples.resize(
      static_cast<std::size_t>(sf_read_float(sndfile, decoded.samples.data(), info.frames)));
  sf_close(sndfile);
  return decoded;
}

int ExpectedMajorFormat(AudioFormat format) {
  switch (format) {
    case AudioFormat::kMp3:
      return SF_FORMAT_MPEG;
    case AudioFormat::kOpus:
      return SF_FORMAT_OGG;
    case AudioFormat::kFlac:
      return SF_FORMAT_FLAC;
    case AudioFormat::kWav:
      return SF_FORMAT_WAV;
    case AudioFormat::kPcm:
      return SF_FORMAT_RAW;
    case AudioFormat::kAac:
      return 0;  // decoded by libavcodec, which has no such code
    case AudioFormat::kUlaw:
      return 0;  // headerless G.711; mulaw_encoder_test.cc checks it against the G.711 expansion
  }
  return -1;
}

class EncoderRoundTripTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(EncoderRoundTripTest, DecodesToTheFormatAndRate) {
  const FormatCase& c = GetParam();
  absl::StatusOr<DecodedAudio> decoded = Decode(c.format, EncodeTone(c).bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->format & SF_FORMAT_TYPEMASK, ExpectedMajorFormat(c.format));
  EXPECT_EQ(decoded->sample_rate, OutputSampleRate(c.format, kInputRate));
  EXPECT_EQ(decoded->channels, 1);
}

TEST_P(EncoderRoundTripTest, KeepsTheDuration) {
  const FormatCase& c = GetParam();
  absl::StatusOr<DecodedAudio> decoded = Decode(c.format, EncodeTone(c).bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_GE(decoded->DurationSeconds(), kSeconds - 0.001);
  EXPECT_LE(decoded->DurationSeconds(), kSeconds + c.max_extra_seconds);
}

TEST_P(EncoderRoundTripTest, KeepsTheTone) {
  const FormatCase& c = GetParam();
  absl::StatusOr<DecodedAudio> decoded = Decode(c.format, EncodeTone(c).bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  std::span<const float> middle = Middle(decoded->samples, decoded->sample_rate, 0.5);
  EXPECT_NEAR(Rms(middle), 0.5 / std::sqrt(2.0), 0.05);
  EXPECT_NEAR(ZeroCrossingFrequency(middle, decoded->sample_rate), kToneHz, kToneHz * 0.03);
}

TEST_P(EncoderRoundTripTest, EmitsBeforeFinishOnlyWhenStreaming) {
  const FormatCase& c = GetParam();
  Encoded encoded = EncodeTone(c);
  if (c.streaming) {
    EXPECT_GT(encoded.bytes_before_finish, encoded.bytes.size() / 2)
        << "most of a streamed file leaves before Finish";
  } else {
    EXPECT_EQ(encoded.bytes_before_finish, 0u);
  }
}

TEST_P(EncoderRoundTripTest, AudioOfNoLengthIsStillAValidFile) {
  const FormatCase& c = GetParam();
  auto encoder = CreateEncoder(
      {.format = c.format, .input_sample_rate = kInputRate, .streaming = c.streaming});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  std::string bytes;
  ASSERT_TRUE((*encoder)->Finish(&bytes).ok());
  if (c.format == AudioFormat::kPcm) {
    EXPECT_TRUE(bytes.empty());
    return;
  }
  absl::StatusOr<DecodedAudio> decoded = Decode(c.format, bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_LT(decoded->DurationSeconds(), 0.001);
}

TEST_P(EncoderRoundTripTest, EncodeAfterFinishFails) {
  const FormatCase& c = GetParam();
  auto encoder = CreateEncoder(
      {.format = c.format, .input_sample_rate = kInputRate, .streaming = c.streaming});
  ASSERT_TRUE(encoder.ok()) << encoder.status();
  std::string bytes;
  ASSERT_TRUE((*encoder)->Finish(&bytes).ok());
  std::vector<float> samples(100, 0.0f);
  EXPECT_EQ((*encoder)->Encode(samples, &bytes).code(), absl::StatusCode::kFailedPrecondition);
}

// Extra duration allowed per format: AAC primes 1024 samples and pads to a 1024-sample frame
// (up to ~0.09 s at 22050 Hz); a streamed MP3 has no LAME tag to trim LAME's delay and padding
// (~0.1 s with the blank first frame), the whole one does; FLAC, WAV, pcm and Ogg Opus (pre-skip
// and end trimming in the container) are exact.
INSTANTIATE_TEST_SUITE_P(
    AllFormats, EncoderRoundTripTest,
    ::testing::Values(
        FormatCase{AudioFormat::kPcm, false, 0.001}, FormatCase{AudioFormat::kPcm, true, 0.001},
        FormatCase{AudioFormat::kWav, false, 0.0}, FormatCase{AudioFormat::kWav, true, 0.0},
        FormatCase{AudioFormat::kFlac, false, 0.0}, FormatCase{AudioFormat::kFlac, true, 0.0},
        FormatCase{AudioFormat::kMp3, false, 0.06}, FormatCase{AudioFormat::kMp3, true, 0.2},
        FormatCase{AudioFormat::kOpus, false, 0.001}, FormatCase{AudioFormat::kOpus, true, 0.001},
        FormatCase{AudioFormat::kAac, false, 0.1}, FormatCase{AudioFormat::kAac, true, 0.1}),
    ParamName);

TEST(EncoderSampleRateTest, Mp3AndAacCarryEveryRateTheyKeep) {
  for (AudioFormat format : {AudioFormat::kMp3, AudioFormat::kAac}) {
    for (int rate : {8000, 16000, 24000, 44100, 48000}) {
      auto encoder = CreateEncoder({.format = format, .input_sample_rate = rate});
      ASSERT_TRUE(encoder.ok()) << encoder.status();
      std::vector<float> tone = Sine(kToneHz, rate, 0.2);
      std::string bytes;
      ASSERT_TRUE((*encoder)->Encode(tone, &bytes).ok());
      ASSERT_TRUE((*encoder)->Finish(&bytes).ok());
      absl::StatusOr<DecodedAudio> decoded = Decode(format, bytes);
      ASSERT_TRUE(decoded.ok()) << decoded.status();
      EXPECT_EQ(decoded->sample_rate, rate) << FormatName(format);
    }
  }
}

TEST(CreateEncoderTest, RejectsAnImplausibleInputRate) {
  for (int rate : {0, -22050, 10'000'000}) {
    EXPECT_EQ(
        CreateEncoder({.format = AudioFormat::kWav, .input_sample_rate = rate}).status().code(),
        absl::StatusCode::kInvalidArgument)
        << rate;
  }
}

}  // namespace
}  // namespace voxserve::audio
