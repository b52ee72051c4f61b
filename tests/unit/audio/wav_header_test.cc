// CheckWavHeader: a WAV header must describe its data (issue 29: 7-bit samples over 16-bit data
// were read by libsndfile as twice as many 8-bit ones, and a voice was registered from that).
#include "audio/wav_header.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "audio/audio_file_decoder.h"

namespace voxserve::audio {
namespace {

using ::testing::HasSubstr;

struct Fields {
  uint16_t tag = 1;  // PCM
  uint16_t channels = 1;
  uint32_t rate = 16000;
  uint16_t bits = 16;
  int block_align = -1;   // -1: channels x bytes
  int data_bytes = 3200;  // 0.1 s of 16-bit mono
  bool extensible = false;
  uint16_t valid_bits = 0;
  bool big_endian = false;  // RIFX
};

void Put(std::string& out, uint64_t value, int width, bool big) {
  for (int i = 0; i < width; ++i) {
    int shift = 8 * (big ? width - 1 - i : i);
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

// A WAVE file with the given header fields and `data_bytes` of a ramp (not silence).
std::string Wav(const Fields& f) {
  const bool big = f.big_endian;
  const uint16_t align = f.block_align >= 0 ? static_cast<uint16_t>(f.block_align)
                                            : static_cast<uint16_t>(f.channels * (f.bits / 8));
  std::string fmt;
  Put(fmt, f.extensible ? 0xFFFE : f.tag, 2, big);
  Put(fmt, f.channels, 2, big);
  Put(fmt, f.rate, 4, big);
  Put(fmt, static_cast<uint64_t>(f.rate) * align, 4, big);
  Put(fmt, align, 2, big);
  Put(fmt, f.bits, 2, big);
  if (f.extensible) {
    Put(fmt, 22, 2, big);                                         // cbSize
    Put(fmt, f.valid_bits != 0 ? f.valid_bits : f.bits, 2, big);  // wValidBitsPerSample
    Put(fmt, 4, 4, big);                                          // dwChannelMask: front centre
    Put(fmt, f.tag, 2, big);                                      // SubFormat GUID, first field
    fmt += std::string("\x00\x00\x00\x00\x10\x00\x80\x00\x00\xAA\x00\x38\x9B\x71", 14);
  }
  std::string data;
  for (int i = 0; i < f.data_bytes; ++i) data.push_back(static_cast<char>((i * 37) & 0xff));
  std::string body = "WAVE";
  body += "fmt ";
  Put(body, fmt.size(), 4, big);
  body += fmt;
  body += "data";
  Put(body, data.size(), 4, big);
  body += data;
  if (data.size() % 2 != 0) body.push_back('\0');
  std::string file = big ? "RIFX" : "RIFF";
  Put(file, body.size(), 4, big);
  return file + body;
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string Refusal(const std::string& wav) {
  absl::Status status = CheckWavHeader(Bytes(wav));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  return std::string(status.message());
}

TEST(WavHeaderTest, AcceptsTheSampleFormatsThatExist) {
  for (uint16_t bits : {8, 16, 24, 32}) {
    EXPECT_TRUE(CheckWavHeader(Bytes(Wav({.bits = bits, .data_bytes = bits * 12}))).ok()) << bits;
  }
  for (uint16_t bits : {32, 64}) {
    EXPECT_TRUE(CheckWavHeader(Bytes(Wav({.tag = 3, .bits = bits, .data_bytes = bits}))).ok());
  }
  EXPECT_TRUE(CheckWavHeader(Bytes(Wav({.tag = 7, .bits = 8, .data_bytes = 801}))).ok());
  // 20 valid bits in 24-bit containers, as recorders write them.
  EXPECT_TRUE(
      CheckWavHeader(
          Bytes(Wav({.bits = 24, .data_bytes = 2400, .extensible = true, .valid_bits = 20})))
          .ok());
  EXPECT_TRUE(CheckWavHeader(Bytes(Wav({.channels = 2, .big_endian = true}))).ok());
}

TEST(WavHeaderTest, RefusesABitDepthThatNoSampleFormatHas) {
  // The file: 16-bit samples under a header saying 7 bits.
  EXPECT_THAT(Refusal(Wav({.bits = 7, .block_align = 2})),
              HasSubstr("7-bit PCM; PCM samples have 8, 16, 24 or 32 bits"));
  EXPECT_THAT(Refusal(Wav({.bits = 12, .block_align = 2, .extensible = true})),
              HasSubstr("12-bit PCM"));
  EXPECT_THAT(Refusal(Wav({.tag = 3, .bits = 16})), HasSubstr("16-bit float"));
  EXPECT_THAT(Refusal(Wav({.tag = 6, .bits = 16})), HasSubstr("16-bit A-law"));
  EXPECT_THAT(Refusal(Wav({.bits = 16, .extensible = true, .valid_bits = 20})),
              HasSubstr("20 valid bits in a 16-bit sample"));
}

TEST(WavHeaderTest, RefusesABlockAlignThatDoesNotFitTheSamples) {
  EXPECT_THAT(Refusal(Wav({.channels = 2, .block_align = 2})),
              HasSubstr("its block align is 2 bytes; 2 channel(s) of 16-bit samples take 4"));
  EXPECT_THAT(Refusal(Wav({.block_align = 0})), HasSubstr("block align is 0"));
  EXPECT_THAT(Refusal(Wav({.channels = 0, .block_align = 2})), HasSubstr("0 channels"));
}

TEST(WavHeaderTest, RefusesADataSizeThatIsNotAWholeNumberOfBlocks) {
  EXPECT_THAT(Refusal(Wav({.data_bytes = 3201})),
              HasSubstr("its data size of 3201 bytes is not a whole number of 2-byte blocks"));
  // "Unknown" as streaming writers put it is no size to check (libsndfile reads what is there).
  std::string streamed = Wav({});
  std::memset(streamed.data() + 40, 0xff, 4);
  EXPECT_TRUE(CheckWavHeader(Bytes(streamed)).ok());
}

TEST(WavHeaderTest, RefusesAHeaderCutShortOrOutOfOrder) {
  std::string wav = Wav({});
  EXPECT_THAT(Refusal(wav.substr(0, 30)), HasSubstr("ends inside its fmt chunk"));
  EXPECT_THAT(Refusal(wav.substr(0, 10)), HasSubstr("ends inside its RIFF header"));
  EXPECT_THAT(Refusal(wav.substr(0, 12)), HasSubstr("no fmt chunk"));
  std::string data_first = wav.substr(0, 12) + wav.substr(36);  // drop the fmt chunk
  EXPECT_THAT(Refusal(data_first), HasSubstr("data chunk comes before any fmt chunk"));
}

TEST(WavHeaderTest, LeavesOtherFilesAndCodecsToTheirDecoders) {
  EXPECT_TRUE(CheckWavHeader(Bytes(std::string("fLaC\0\0\0\x22", 8))).ok());
  EXPECT_TRUE(CheckWavHeader(Bytes(std::string("RIFF\x04\0\0\0AVI ", 12))).ok());
  EXPECT_TRUE(CheckWavHeader(Bytes(Wav({.tag = 2, .bits = 4, .block_align = 256}))).ok());  // ADPCM
}

TEST(WavHeaderTest, TheDecoderRefusesWhatTheCheckRefuses) {
  // Before the check, libsndfile decoded this as 3200 8-bit samples: twice the real length.
  absl::StatusOr<PcmAudio> audio = DecodeAudioFile(Bytes(Wav({.bits = 7, .block_align = 2})));
  EXPECT_EQ(audio.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(audio.status().message(), HasSubstr("malformed WAV header: 7-bit PCM"));
  absl::StatusOr<PcmAudio> good = DecodeAudioFile(Bytes(Wav({})));
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->samples.size(), 1600u);
}

}  // namespace
}  // namespace voxserve::audio
