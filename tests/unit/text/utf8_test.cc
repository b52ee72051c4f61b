#include "text/utf8.h"

#include <string>

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace voxserve::text {
namespace {

using ::testing::HasSubstr;

TEST(ValidateUtf8, AcceptsAscii) { EXPECT_TRUE(ValidateUtf8("Hello, world.", "input").ok()); }

TEST(ValidateUtf8, AcceptsEmptyText) { EXPECT_TRUE(ValidateUtf8("", "input").ok()); }

TEST(ValidateUtf8, AcceptsTwoThreeAndFourByteSequences) {
  EXPECT_TRUE(ValidateUtf8("caf\xC3\xA9", "input").ok());               // é U+00E9
  EXPECT_TRUE(ValidateUtf8("\xE4\xBD\xA0\xE5\xA5\xBD", "input").ok());  // 你好
  EXPECT_TRUE(ValidateUtf8("\xF0\x9F\x98\x80", "input").ok());          // 😀 U+1F600
}

TEST(ValidateUtf8, AcceptsTheHighestCodePoint) {
  EXPECT_TRUE(ValidateUtf8("\xF4\x8F\xBF\xBF", "input").ok());  // U+10FFFF
}

TEST(ValidateUtf8, AcceptsNulAsAnyOtherCodePoint) {
  EXPECT_TRUE(ValidateUtf8(std::string("a\0b", 3), "input").ok());
}

TEST(ValidateUtf8, RejectsOverlongEncodingAtItsOffset) {
  absl::Status status = ValidateUtf8("ab\xC0\xAF", "input");  // '/' in two bytes
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("byte offset 2"));
}

TEST(ValidateUtf8, RejectsThreeByteOverlongAtItsOffset) {
  EXPECT_THAT(ValidateUtf8("a\xE0\x80\xAF", "input").message(), HasSubstr("byte offset 1"));
}

TEST(ValidateUtf8, RejectsEncodedSurrogateAtItsOffset) {
  EXPECT_THAT(ValidateUtf8("abc\xED\xA0\x80", "input").message(),  // U+D800
              HasSubstr("byte offset 3"));
}

TEST(ValidateUtf8, RejectsCodePointAboveU10FFFFAtItsOffset) {
  EXPECT_THAT(ValidateUtf8("x\xF4\x90\x80\x80", "input").message(),  // U+110000
              HasSubstr("byte offset 1"));
}

TEST(ValidateUtf8, RejectsTruncatedSequenceAtItsOffset) {
  EXPECT_THAT(ValidateUtf8("\xE4\xBD\xA0\xE5\xA5", "input").message(),  // 你 then half of 好
              HasSubstr("byte offset 3"));
}

TEST(ValidateUtf8, RejectsLoneContinuationByteAtItsOffset) {
  EXPECT_THAT(ValidateUtf8("ok\x80", "input").message(), HasSubstr("byte offset 2"));
}

TEST(ValidateUtf8, RejectsBytesThatNeverOccurInUtf8) {
  EXPECT_THAT(ValidateUtf8("\xFF", "input").message(), HasSubstr("byte offset 0"));
}

TEST(ValidateUtf8, ErrorNamesTheParamAndCode) {
  core::ErrorDetail detail = core::DetailOf(ValidateUtf8("\xFF", "input"));
  EXPECT_EQ(detail.param, "input");
  EXPECT_EQ(detail.code, "invalid_utf8");
}

TEST(CountCodePoints, CountsAsciiBytes) { EXPECT_EQ(CountCodePoints("hello"), 5u); }

TEST(CountCodePoints, CountsMultibyteCharactersOnce) {
  EXPECT_EQ(CountCodePoints("caf\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x98\x80"), 9u);
}

TEST(CountCodePoints, CountsNothingInEmptyText) { EXPECT_EQ(CountCodePoints(""), 0u); }

TEST(TrimWhitespace, RemovesAsciiWhitespaceAtBothEnds) {
  EXPECT_EQ(TrimWhitespace(" \t\nHello world\r\n "), "Hello world");
}

TEST(TrimWhitespace, RemovesIdeographicAndNoBreakSpaces) {
  EXPECT_EQ(TrimWhitespace("\xE3\x80\x80\xC2\xA0\xE4\xBD\xA0\xE5\xA5\xBD\xE3\x80\x80"),
            "\xE4\xBD\xA0\xE5\xA5\xBD");  // U+3000 U+00A0 你好 U+3000
}

TEST(TrimWhitespace, KeepsInnerWhitespace) { EXPECT_EQ(TrimWhitespace("  a  b  "), "a  b"); }

TEST(TrimWhitespace, LeavesNothingOfWhitespaceOnlyText) {
  EXPECT_EQ(TrimWhitespace(" \t\xE3\x80\x80 "), "");
}

}  // namespace
}  // namespace voxserve::text
