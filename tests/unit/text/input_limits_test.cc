#include "text/input_limits.h"

#include <string>

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace voxserve::text {
namespace {

using ::testing::HasSubstr;

constexpr const char* kNi = "\xE4\xBD\xA0";  // 你: one character, three bytes

std::string Repeat(std::string_view piece, std::size_t times) {
  std::string text;
  for (std::size_t i = 0; i < times; ++i) text += piece;
  return text;
}

TEST(CheckInput, AcceptsOrdinaryText) {
  EXPECT_TRUE(CheckInput("Hello there.", InputLimits{}, "input").ok());
}

TEST(CheckInput, RejectsInvalidUtf8) {
  EXPECT_EQ(core::DetailOf(CheckInput("bad \xFF", InputLimits{}, "input")).code, "invalid_utf8");
}

TEST(CheckInput, RejectsEmptyText) {
  absl::Status status = CheckInput("", InputLimits{}, "input");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(status).code, "empty_input");
}

TEST(CheckInput, RejectsAsciiWhitespaceOnly) {
  EXPECT_EQ(core::DetailOf(CheckInput(" \t\r\n ", InputLimits{}, "input")).code, "empty_input");
}

TEST(CheckInput, RejectsIdeographicSpaceOnly) {
  EXPECT_EQ(core::DetailOf(CheckInput("\xE3\x80\x80\xE3\x80\x80", InputLimits{}, "input")).code,
            "empty_input");
}

TEST(CheckInput, RejectsPunctuationOnlyAsNothingToSpeak) {
  absl::Status status = CheckInput("... !!!", InputLimits{}, "input");
  EXPECT_EQ(core::DetailOf(status).code, "empty_input");
  EXPECT_THAT(status.message(), HasSubstr("nothing to speak"));
}

TEST(CheckInput, RejectsOnlyNulsAndZeroWidthCharacters) {
  EXPECT_EQ(core::DetailOf(CheckInput(std::string("\0\0", 2), InputLimits{}, "input")).code,
            "empty_input");
  EXPECT_EQ(core::DetailOf(CheckInput("\xE2\x80\x8B\xEE\x80\x80", InputLimits{}, "input")).code,
            "empty_input");
}

TEST(CheckInput, EmptyInputErrorNamesTheParam) {
  EXPECT_EQ(core::DetailOf(CheckInput("", InputLimits{}, "text")).param, "text");
}

TEST(CheckInput, AcceptsTextExactlyAtTheLimit) {
  EXPECT_TRUE(CheckInput(std::string(10, 'a'), InputLimits{.max_input_chars = 10}, "input").ok());
}

TEST(CheckInput, RejectsOneCharacterOverTheLimitAsPayloadTooLarge) {
  absl::Status status =
      CheckInput(std::string(11, 'a'), InputLimits{.max_input_chars = 10}, "input");
  EXPECT_EQ(core::DetailOf(status).reason, core::ErrorReason::kPayloadTooLarge);
}

TEST(CheckInput, TooLargeErrorNamesTheParam) {
  absl::Status status =
      CheckInput(std::string(11, 'a'), InputLimits{.max_input_chars = 10}, "input");
  EXPECT_EQ(core::DetailOf(status).param, "input");
}

TEST(CheckInput, TooLargeMessageGivesTheLimitAndTheCount) {
  absl::Status status =
      CheckInput(std::string(11, 'a'), InputLimits{.max_input_chars = 10}, "input");
  EXPECT_THAT(status.message(), HasSubstr("11 characters"));
  EXPECT_THAT(status.message(), HasSubstr("limit is 10"));
}

TEST(CheckInput, CountsChineseByCharacterNotByByte) {
  // 10 characters, 30 bytes.
  EXPECT_TRUE(CheckInput(Repeat(kNi, 10), InputLimits{.max_input_chars = 10}, "input").ok());
}

TEST(CheckInput, RejectsChineseOneCharacterOverTheLimit) {
  absl::Status status = CheckInput(Repeat(kNi, 11), InputLimits{.max_input_chars = 10}, "input");
  EXPECT_EQ(core::DetailOf(status).reason, core::ErrorReason::kPayloadTooLarge);
}

TEST(InputLimits, DefaultIsOpenAisLimitOf4096Characters) {
  EXPECT_EQ(InputLimits{}.max_input_chars, 4096u);
}

}  // namespace
}  // namespace voxserve::text
