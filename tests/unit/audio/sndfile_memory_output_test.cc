#include "audio/sndfile_memory_output.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace voxserve::audio {
namespace {

TEST(SndfileMemoryOutputTest, TakeBytesHandsOutWhatWasWritten) {
  SndfileMemoryOutput output;
  output.Write("abcd", 4);
  std::string out;
  output.TakeBytes(&out);
  EXPECT_EQ(out, "abcd");
  output.TakeBytes(&out);
  EXPECT_EQ(out, "abcd") << "bytes are handed out once";
  EXPECT_EQ(output.Length(), 4);
}

TEST(SndfileMemoryOutputTest, PatchBeforeTakingLandsInTheBytes) {
  SndfileMemoryOutput output;
  output.Write("abcdef", 6);
  output.Seek(1, SEEK_SET);
  output.Write("XY", 2);
  output.Seek(0, SEEK_END);
  output.Write("g", 1);
  std::string out;
  output.TakeBytes(&out);
  EXPECT_EQ(out, "aXYdefg");
}

TEST(SndfileMemoryOutputTest, PatchOfTakenBytesIsDroppedButReportsSuccess) {
  SndfileMemoryOutput output;
  output.Write("abcd", 4);
  std::string out;
  output.TakeBytes(&out);
  output.Write("ef", 2);
  EXPECT_EQ(output.Seek(2, SEEK_SET), 2);
  EXPECT_EQ(output.Write("XYZ", 3), 3);  // "XY" falls on taken bytes, "Z" on pending ones
  EXPECT_EQ(output.Tell(), 5);
  output.TakeBytes(&out);
  EXPECT_EQ(out, "abcdZf");
}

TEST(SndfileMemoryOutputTest, WritePastTheEndFillsTheGapWithZeros) {
  SndfileMemoryOutput output;
  output.Seek(2, SEEK_SET);
  output.Write("a", 1);
  std::string out;
  output.TakeBytes(&out);
  EXPECT_EQ(out, std::string("\0\0a", 3));
}

TEST(SndfileMemoryOutputTest, SeekBeforeTheStartFails) {
  SndfileMemoryOutput output;
  EXPECT_EQ(output.Seek(-1, SEEK_SET), -1);
}

TEST(SndfileMemoryOutputTest, ReadsBytesNotYetTaken) {
  SndfileMemoryOutput output;
  output.Write("abcd", 4);
  output.Seek(1, SEEK_SET);
  char buffer[8] = {};
  EXPECT_EQ(output.Read(buffer, 8), 3);
  EXPECT_EQ(std::string(buffer, 3), "bcd");
}

}  // namespace
}  // namespace voxserve::audio
