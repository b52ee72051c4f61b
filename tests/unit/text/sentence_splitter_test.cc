#include "text/sentence_splitter.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "text/utf8.h"

namespace voxserve::text {
namespace {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A failed Create() throws absl::BadStatusOrAccess, which GoogleTest reports with the status.
std::unique_ptr<SentenceSplitter> Splitter(std::string_view locale) {
  return SentenceSplitter::Create(locale).value();
}

std::vector<std::string> SplitEnglish(std::string_view text, std::size_t max_chars = 0) {
  return Splitter("en")->Split(text, max_chars);
}

MATCHER(IsValidUtf8, "") { return ValidateUtf8(arg, "sentence").ok(); }

TEST(SentenceSplitter, SplitsEnglishSentences) {
  EXPECT_THAT(SplitEnglish("The sun rose. Birds sang. It was morning."),
              ElementsAre("The sun rose.", "Birds sang.", "It was morning."));
}

TEST(SentenceSplitter, KeepsTitleAbbreviationWithTheName) {
  EXPECT_THAT(SplitEnglish("Mr. Smith went to Washington. He arrived."),
              ElementsAre("Mr. Smith went to Washington.", "He arrived."));
}

TEST(SentenceSplitter, KeepsAbbreviationsFromIcusEnglishList) {
  EXPECT_THAT(SplitEnglish("Ask Prof. Jones and Capt. Lee. They know."),
              ElementsAre("Ask Prof. Jones and Capt. Lee.", "They know."));
}

TEST(SentenceSplitter, KeepsLatinAbbreviationBeforeLowercase) {
  EXPECT_THAT(SplitEnglish("Bring fruit, e.g. apples. Then rest."),
              ElementsAre("Bring fruit, e.g. apples.", "Then rest."));
}

TEST(SentenceSplitter, KeepsDoctorWithTheName) {
  EXPECT_THAT(SplitEnglish("I met Dr. Jones today. She was kind."),
              ElementsAre("I met Dr. Jones today.", "She was kind."));
}

TEST(SentenceSplitter, EndsSentencesAtQuestionAndExclamationMarks) {
  EXPECT_THAT(SplitEnglish("Are you there? Yes! Good."),
              ElementsAre("Are you there?", "Yes!", "Good."));
}

TEST(SentenceSplitter, KeepsDecimalNumbersWhole) {
  EXPECT_THAT(SplitEnglish("It costs 3.50 dollars."), ElementsAre("It costs 3.50 dollars."));
}

TEST(SentenceSplitter, KeepsTextWithoutTerminatorAsOneSentence) {
  EXPECT_THAT(SplitEnglish("no punctuation here"), ElementsAre("no punctuation here"));
}

TEST(SentenceSplitter, EndsASentenceAtANewline) {
  EXPECT_THAT(SplitEnglish("Title\nBody text."), ElementsAre("Title", "Body text."));
}

TEST(SentenceSplitter, SplitsChineseAtFullwidthTerminators) {
  EXPECT_THAT(Splitter("zh")->Split("你好。今天天气很好！我们去公园吧？"),
              ElementsAre("你好。", "今天天气很好！", "我们去公园吧？"));
}

TEST(SentenceSplitter, SplitsMixedChineseAndEnglish) {
  EXPECT_THAT(Splitter("zh")->Split("我喜欢Python。It is easy! 你呢？"),
              ElementsAre("我喜欢Python。", "It is easy!", "你呢？"));
}

TEST(SentenceSplitter, EnglishSplitterAlsoSplitsChinese) {
  EXPECT_THAT(SplitEnglish("Hello world. 你好。再见！"),
              ElementsAre("Hello world.", "你好。", "再见！"));
}

TEST(SentenceSplitter, GivesNothingForEmptyText) { EXPECT_THAT(SplitEnglish(""), IsEmpty()); }

TEST(SentenceSplitter, GivesNothingForWhitespaceOnlyText) {
  EXPECT_THAT(SplitEnglish(" \n\t\xE3\x80\x80 "), IsEmpty());
}

TEST(SentenceSplitter, TrimsSurroundingWhitespace) {
  EXPECT_THAT(SplitEnglish("  \tFirst one.   Second one.  \n"),
              ElementsAre("First one.", "Second one."));
}

TEST(SentenceSplitter, TrimsIdeographicSpace) {
  EXPECT_THAT(Splitter("zh")->Split("\xE3\x80\x80你好。\xE3\x80\x80再见。"),
              ElementsAre("你好。", "再见。"));
}

TEST(SentenceSplitter, LeavesSentencesWithinTheLimitAlone) {
  EXPECT_THAT(SplitEnglish("Short one. Another.", 20), ElementsAre("Short one.", "Another."));
}

TEST(SentenceSplitter, CutsALongSentenceAfterTheLastCommaBeforeTheLimit) {
  EXPECT_THAT(SplitEnglish("One two, three four, five six seven eight.", 24),
              ElementsAre("One two, three four,", "five six seven eight."));
}

TEST(SentenceSplitter, CutsALongChineseSentenceAfterTheIdeographicComma) {
  EXPECT_THAT(Splitter("zh")->Split("今天天气很好，我们去公园散步吧。", 9),
              ElementsAre("今天天气很好，", "我们去公园散步吧。"));
}

TEST(SentenceSplitter, CutsALongSentenceAtASpaceWhenThereIsNoComma) {
  EXPECT_THAT(SplitEnglish("alpha beta gamma delta", 12), ElementsAre("alpha beta", "gamma delta"));
}

TEST(SentenceSplitter, DoesNotCutInsideANumber) {
  EXPECT_THAT(SplitEnglish("About 1,000,000 people came", 18),
              ElementsAre("About 1,000,000", "people came"));
}

TEST(SentenceSplitter, HardCutsTextWithoutBreaksAtTheLimit) {
  EXPECT_THAT(SplitEnglish("abcdefghij", 4), ElementsAre("abcd", "efgh", "ij"));
}

TEST(SentenceSplitter, HardCutsMultibyteTextOnCharacterBoundaries) {
  // 12 characters of 3 bytes and 4 bytes, no space or punctuation: cut every 5 characters.
  EXPECT_THAT(SplitEnglish("你好世界😀你好世界😀你好", 5),
              ElementsAre("你好世界😀", "你好世界😀", "你好"));
}

TEST(SentenceSplitter, HardCutPiecesAreValidUtf8) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "é你😀";
  EXPECT_THAT(SplitEnglish(text, 7), Each(IsValidUtf8()));
}

TEST(SentenceSplitter, HardCutPiecesRespectTheLimit) {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "é你😀";
  for (const std::string& piece : SplitEnglish(text, 7)) EXPECT_LE(CountCodePoints(piece), 7u);
}

TEST(SentenceSplitter, AcceptsABcp47LocaleId) {
  EXPECT_TRUE(SentenceSplitter::Create("en-US").ok());
}

TEST(SentenceSplitter, AcceptsAnIcuLocaleId) {
  EXPECT_TRUE(SentenceSplitter::Create("zh_Hans_CN").ok());
}

TEST(SentenceSplitter, RejectsAMalformedLocaleId) {
  EXPECT_EQ(SentenceSplitter::Create("notalanguagecode").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SentenceSplitter, FallsBackToRootRulesForAnUnknownLocale) {
  EXPECT_THAT(Splitter("xx")->Split("One. Two."), ElementsAre("One.", "Two."));
}

TEST(SentenceSplitter, GivesTheSameSentencesFromConcurrentCalls) {
  std::unique_ptr<SentenceSplitter> splitter = Splitter("en");
  std::string text;
  for (int i = 0; i < 200; ++i) text += "Mr. Smith went to Washington. 你好。Is it 3.50? Yes! ";
  const std::vector<std::string> expected = splitter->Split(text, 16);
  std::vector<std::vector<std::string>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&splitter, &text, &result] {
      for (int round = 0; round < 20; ++round) result = splitter->Split(text, 16);
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_THAT(results, Each(expected));
}

TEST(SentenceSplitter, SplitsLongTextIntoEverySentence) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "Mr. Smith went to Washington. 你好。Is it 3.50? Yes! ";
  EXPECT_THAT(Splitter("en")->Split(text), SizeIs(800));
}

}  // namespace
}  // namespace voxserve::text
