#include "text/speakable_text.h"

#include <string>

#include "gtest/gtest.h"

namespace voxserve::text {
namespace {

using namespace std::string_literals;  // "..."s keeps embedded NULs

TEST(ControlCharactersAsSpaces, TurnsAnEmbeddedNulIntoASpaceAndKeepsTheRest) {
  EXPECT_EQ(ControlCharactersAsSpaces("Hello world.\0 This is a longer sentence."s),
            "Hello world.  This is a longer sentence.");
}

TEST(ControlCharactersAsSpaces, ReplacesOtherC0C1AndDelete) {
  // ESC, BEL, DEL, U+0085 is whitespace (NEL) and stays; U+0090 (C1, two bytes) becomes two spaces.
  EXPECT_EQ(ControlCharactersAsSpaces("a\x1b"
                                      "b\x07"
                                      "c\x7f"
                                      "d\xc2\x90"
                                      "e"),
            "a b c d  e");
}

TEST(ControlCharactersAsSpaces, KeepsWhitespaceControls) {
  EXPECT_EQ(ControlCharactersAsSpaces("one\ttwo\nthree\r\nfour\xc2\x85"),
            "one\ttwo\nthree\r\nfour\xc2\x85");
}

TEST(ControlCharactersAsSpaces, LeavesOrdinaryTextAlone) {
  EXPECT_EQ(ControlCharactersAsSpaces("你好。Grüße!"), "你好。Grüße!");
}

TEST(HasSpeakableCharacters, LettersDigitsAndSymbolsCount) {
  EXPECT_TRUE(HasSpeakableCharacters("Hello"));
  EXPECT_TRUE(HasSpeakableCharacters("... 42 ..."));
  EXPECT_TRUE(HasSpeakableCharacters("你"));
  EXPECT_TRUE(HasSpeakableCharacters("$"));
}

TEST(HasSpeakableCharacters, PunctuationOnlyIsNothingToSay) {
  EXPECT_FALSE(HasSpeakableCharacters("...!?!"));
  EXPECT_FALSE(HasSpeakableCharacters("\xE3\x80\x82\xEF\xBC\x81"));  // 。！
}

TEST(HasSpeakableCharacters, InvisibleAndPrivateUseCharactersAreNothingToSay) {
  EXPECT_FALSE(HasSpeakableCharacters("\xE2\x80\x8B\xE2\x80\x8D\xEF\xBB\xBF"));  // ZWSP ZWJ BOM
  EXPECT_FALSE(HasSpeakableCharacters("\xEE\x80\x80\xF3\xB0\x80\x80"));          // U+E000, U+F0000
}

TEST(HasSpeakableCharacters, NulsAndWhitespaceAreNothingToSay) {
  EXPECT_FALSE(HasSpeakableCharacters("\0\0\0"s));
  EXPECT_FALSE(HasSpeakableCharacters(" \t\n"));
  EXPECT_FALSE(HasSpeakableCharacters(""));
}

}  // namespace
}  // namespace voxserve::text
