#include "text/ssml/say_as.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace voxserve::text::ssml {
namespace {

std::string Say(std::string kind, std::string_view content, std::string format = "",
                std::string language = "en") {
  SayAs say_as;
  say_as.interpret_as = std::move(kind);
  say_as.format = std::move(format);
  say_as.language = std::move(language);
  return ExpandSayAs(say_as, content);
}

using Table = std::vector<std::pair<std::string, std::string>>;

TEST(EnglishCardinal, Table) {
  for (const auto& [number, words] : Table{
           {"0", "zero"},
           {"7", "seven"},
           {"13", "thirteen"},
           {"20", "twenty"},
           {"21", "twenty-one"},
           {"99", "ninety-nine"},
           {"100", "one hundred"},
           {"101", "one hundred one"},
           {"342", "three hundred forty-two"},
           {"1000", "one thousand"},
           {"1,234", "one thousand two hundred thirty-four"},
           {"20000", "twenty thousand"},
           {"1000001", "one million one"},
           {"2500000000", "two billion five hundred million"},
           {"-5", "minus five"},
           {"3.14", "three point one four"},
           {"0.5", "zero point five"},
           {"1234567890123456789",
            "one two three four five six seven eight nine zero one two "
            "three four five six seven eight nine"},
           {"twelve", "twelve"},  // not digits: as written
           {"1,2,3", "1,2,3"},
       }) {
    EXPECT_EQ(Say("cardinal", number), words) << number;
  }
  EXPECT_EQ(Say("number", "42"), "forty-two");
}

TEST(EnglishOrdinal, Table) {
  for (const auto& [number, words] : Table{
           {"1", "first"},
           {"2", "second"},
           {"3", "third"},
           {"4", "fourth"},
           {"5", "fifth"},
           {"8", "eighth"},
           {"9", "ninth"},
           {"11", "eleventh"},
           {"12", "twelfth"},
           {"20", "twentieth"},
           {"21st", "twenty-first"},
           {"22nd", "twenty-second"},
           {"23rd", "twenty-third"},
           {"40", "fortieth"},
           {"100th", "one hundredth"},
           {"101", "one hundred first"},
           {"1000", "one thousandth"},
           {"3.", "third"},
           {"x", "x"},
       }) {
    EXPECT_EQ(Say("ordinal", number), words) << number;
  }
}

TEST(SayAsCharacters, SpellsEachCharacterAndDigit) {
  EXPECT_EQ(Say("characters", "ABC"), "A B C");
  EXPECT_EQ(Say("spell-out", "R2-D2"), "R two - D two");
  EXPECT_EQ(Say("characters", "a b"), "a b");
  EXPECT_EQ(Say("characters", "Grüße"), "G r ü ß e");
  EXPECT_EQ(Say("characters", "12", "", "de"), "1 2");  // the engine names digits in its language
}

TEST(SayAsDigits, OneByOne) {
  EXPECT_EQ(Say("digits", "2026"), "two zero two six");
  EXPECT_EQ(Say("digits", " 907 "), "nine zero seven");
  EXPECT_EQ(Say("digits", "12a"), "12a");
  EXPECT_EQ(Say("digits", "123", "", "fr"), "1 2 3");
}

TEST(SayAsDate, FormatsAndDefaults) {
  for (const auto& [input, spoken] :
       std::vector<std::pair<std::pair<std::string, std::string>, std::string>>{
           {{"2026-12-02", ""}, "December second, twenty twenty-six"},
           {{"2026-12-02", "ymd"}, "December second, twenty twenty-six"},
           {{"12/02/2026", ""}, "December second, twenty twenty-six"},
           {{"02.12.2026", "dmy"}, "December second, twenty twenty-six"},
           {{"1999-01-31", ""}, "January thirty-first, nineteen ninety-nine"},
           {{"2000-07-04", ""}, "July fourth, two thousand"},
           {{"2005-03-01", ""}, "March first, two thousand five"},
           {{"1905-05-05", ""}, "May fifth, nineteen oh five"},
           {{"1900-10-10", ""}, "October tenth, nineteen hundred"},
           {{"12/25", "md"}, "December twenty-fifth"},
           {{"25/12", "dm"}, "December twenty-fifth"},
           {{"2026-03", "ym"}, "March twenty twenty-six"},
           {{"1984", "y"}, "nineteen eighty-four"},
           {{"7", "d"}, "the seventh of the month"},
           {{"13/45/2020", "mdy"}, "13/45/2020"},  // no 13th month: as written
           {{"soon", ""}, "soon"},
       }) {
    EXPECT_EQ(Say("date", input.first, input.second), spoken) << input.first;
  }
}

TEST(SayAsTime, TwentyFourAndTwelveHours) {
  for (const auto& [input, spoken] :
       std::vector<std::pair<std::pair<std::string, std::string>, std::string>>{
           {{"15:30", ""}, "fifteen thirty"},
           {{"9:00", ""}, "nine o'clock"},
           {{"09:05", ""}, "nine oh five"},
           {{"18:00", ""}, "eighteen hundred"},
           {{"3:30pm", ""}, "three thirty PM"},
           {{"3:30 PM", ""}, "three thirty PM"},
           {{"11:15 a.m.", ""}, "eleven fifteen AM"},
           {{"7 pm", ""}, "seven PM"},
           {{"15:30", "hms12"}, "three thirty PM"},
           {{"0:10", "hms12"}, "twelve ten AM"},
           {{"10:15:30", ""}, "ten fifteen and thirty seconds"},
           {{"25:00", ""}, "25:00"},
           {{"13:00 pm", ""}, "13:00 pm"},
       }) {
    EXPECT_EQ(Say("time", input.first, input.second), spoken) << input.first;
  }
}

TEST(SayAsTelephone, GroupsDigitByDigit) {
  EXPECT_EQ(Say("telephone", "+1 (555) 123-4567"),
            "plus one, five five five, one two three, four five six seven");
  EXPECT_EQ(Say("telephone", "555-0100 x12"),
            "five five five, zero one zero zero, extension one two");
  EXPECT_EQ(Say("telephone", "call me"), "call me");
  EXPECT_EQ(Say("telephone", "030 1234", "", "de"), "0 3 0, 1 2 3 4");
}

TEST(SayAs, UnknownInterpretationIsSpokenAsWritten) { EXPECT_EQ(Say("currency", "$5"), "$5"); }

TEST(SayAs, LongDigitStringsStayProportionate) {
  const std::string digits(200, '9');
  const std::string cardinal = Say("cardinal", digits);
  EXPECT_LT(cardinal.size(), digits.size() * 6);
  EXPECT_EQ(cardinal.substr(0, 10), "nine nine ");
}

}  // namespace
}  // namespace voxserve::text::ssml
