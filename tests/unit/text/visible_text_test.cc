// FirstInvisibleCharacter: what shows nothing where it stands (issue 29: look-alike voice names).
#include "text/visible_text.h"

#include <gtest/gtest.h>

#include <string>

namespace voxserve::text {
namespace {

TEST(FirstInvisibleCharacter, FindsFormatBidiControlAndIgnorableCharactersWithTheirIndex) {
  struct Case {
    const char* text;
    char32_t code_point;
    size_t index;
  };
  for (const Case& c : {Case{"ab\u200Bc", 0x200B, 2},  // zero-width space (Cf)
                        Case{"\u202Eabc", 0x202E, 0},  // right-to-left override
                        Case{"a\u2067b", 0x2067, 1},   // right-to-left isolate
                        Case{"\u061C", 0x061C, 0},     // Arabic letter mark
                        Case{"é\u00AD", 0x00AD, 1},    // soft hyphen
                        Case{"x\u0085", 0x0085, 1},    // C1 control (Cc)
                        Case{"\uE000", 0xE000, 0},     // private use (Co)
                        Case{"a\uFE0F", 0xFE0F, 1},    // variation selector (ignorable, Mn)
                        Case{"\u3164", 0x3164, 0},     // Hangul filler (ignorable, Lo)
                        Case{"a\u2029b", 0x2029, 1},   // paragraph separator
                        Case{"a\U000E0001", 0xE0001, 1}}) {
    std::optional<InvisibleCharacter> found = FirstInvisibleCharacter(c.text);
    ASSERT_TRUE(found.has_value()) << c.text;
    EXPECT_EQ(found->code_point, c.code_point) << c.text;
    EXPECT_EQ(found->index, c.index) << c.text;
  }
}

TEST(FirstInvisibleCharacter, LeavesVisibleTextOfEveryScriptAlone) {
  for (const char* text : {"Alice", "narrator 2", "Zoë", "日本語の声", "שלום", "مرحبا", "नमस्ते",
                           "한국어", "e\u0301", "a-b_c.d"}) {
    EXPECT_FALSE(FirstInvisibleCharacter(text).has_value()) << text;
  }
  // A zero-width joiner is invisible even where it builds an emoji: names stay plain text.
  EXPECT_TRUE(FirstInvisibleCharacter("👩\u200D🚀").has_value());
}

TEST(LookAlikeKey, NamesThatReadTheSameShareOneKey) {
  // Precomposed and combining, fullwidth and ASCII, ligature and letters, any case.
  EXPECT_EQ(LookAlikeKey("\u00e9"), LookAlikeKey("e\u0301"));
  EXPECT_EQ(LookAlikeKey("\uff32ace2"), LookAlikeKey("Race2"));
  EXPECT_EQ(LookAlikeKey("\ufb01ne"), LookAlikeKey("FINE"));
  EXPECT_EQ(LookAlikeKey("STRASSE"), LookAlikeKey("stra\u00dfe"));
  EXPECT_EQ(LookAlikeKey("My Voice-2"), "my voice-2");  // ASCII: its lower case
  // Different names stay different.
  EXPECT_NE(LookAlikeKey("\u00e9"), LookAlikeKey("e"));
  EXPECT_NE(LookAlikeKey("Race2"), LookAlikeKey("Race3"));
}

TEST(UnspeakableTextProblem, RefusesControlsAndTextThatShowsNothing) {
  EXPECT_EQ(UnspeakableTextProblem("WWW"), "");
  EXPECT_EQ(UnspeakableTextProblem("\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"), "");
  EXPECT_EQ(UnspeakableTextProblem("\U0001F468\u200d\U0001F469"), "");  // ZWJ inside: fine
  EXPECT_EQ(UnspeakableTextProblem(std::string("a\0b", 3)), "holds a control character (U+0000)");
  EXPECT_EQ(UnspeakableTextProblem("a\x7f"), "holds a control character (U+007F)");
  EXPECT_EQ(UnspeakableTextProblem("\u200b"),
            "shows nothing (only invisible characters or spaces)");
  EXPECT_EQ(UnspeakableTextProblem("\u200b \u2060"),
            "shows nothing (only invisible characters or spaces)");
}

}  // namespace
}  // namespace voxserve::text
