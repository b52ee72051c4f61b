#include "text/text_accumulator.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "text/utf8.h"

namespace voxserve::text {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Large enough that no test below is cut for size unless it means to be.
constexpr std::size_t kNoLimit = 100'000;

const SentenceSplitter& English() {
  static const auto* splitter = SentenceSplitter::Create("en").value().release();
  return *splitter;
}

const SentenceSplitter& Chinese() {
  static const auto* splitter = SentenceSplitter::Create("zh").value().release();
  return *splitter;
}

std::vector<std::string> Append(TextAccumulator& accumulator, std::string_view piece) {
  return accumulator.Append(piece).value();
}

std::vector<std::string> Flush(TextAccumulator& accumulator) { return accumulator.Flush().value(); }

// Feeds `text` in pieces cut at `cuts` (ascending byte offsets), then flushes. Returns what came
// out before the flush and what the flush added.
struct Fed {
  std::vector<std::string> before_flush;
  std::vector<std::string> all;
};

Fed Feed(const SentenceSplitter& splitter, std::string_view text, const std::vector<size_t>& cuts) {
  TextAccumulator accumulator(splitter, kNoLimit);
  Fed fed;
  size_t start = 0;
  for (size_t cut : cuts) {
    for (std::string& s : Append(accumulator, text.substr(start, cut - start))) {
      fed.before_flush.push_back(std::move(s));
    }
    start = cut;
  }
  for (std::string& s : Append(accumulator, text.substr(start))) fed.before_flush.push_back(s);
  fed.all = fed.before_flush;
  for (std::string& s : Flush(accumulator)) fed.all.push_back(std::move(s));
  return fed;
}

std::vector<size_t> EveryByte(std::string_view text) {
  std::vector<size_t> cuts;
  for (size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
  return cuts;
}

TEST(TextAccumulator, HoldsASentenceUntilTextFollowsIt) {
  TextAccumulator accumulator(English(), kNoLimit);
  EXPECT_THAT(Append(accumulator, "Hello world."), IsEmpty());
  EXPECT_THAT(Append(accumulator, " "), IsEmpty());
  EXPECT_THAT(Append(accumulator, "How"), ElementsAre("Hello world."));
  EXPECT_THAT(Flush(accumulator), ElementsAre("How"));
}

TEST(TextAccumulator, DoesNotSplitATitleFromTheNameThatFollowsInTheNextPiece) {
  TextAccumulator accumulator(English(), kNoLimit);
  EXPECT_THAT(Append(accumulator, "I met Mr."), IsEmpty());
  EXPECT_THAT(Append(accumulator, " Smith today. Then"), ElementsAre("I met Mr. Smith today."));
}

TEST(TextAccumulator, WaitsForALetterBeforeDecidingOnAFullStop) {
  TextAccumulator accumulator(English(), kNoLimit);
  // "e.g." then a lowercase word is no sentence end.
  EXPECT_THAT(Append(accumulator, "Bring fruit, e.g. "), IsEmpty());
  EXPECT_THAT(Append(accumulator, "apples. It costs 3."), ElementsAre("Bring fruit, e.g. apples."));
  EXPECT_THAT(Append(accumulator, "50 dollars. Bye"), ElementsAre("It costs 3.50 dollars."));
  // Digits alone do not settle it: ICU joins "5. 12 more" because a lowercase word follows.
  EXPECT_THAT(Append(accumulator, " for now. It was 5. 12"), ElementsAre("Bye for now."));
  EXPECT_THAT(Append(accumulator, " more came. Then"), ElementsAre("It was 5. 12 more came."));
}

TEST(TextAccumulator, FlushHandsOutTheUnfinishedSentence) {
  TextAccumulator accumulator(English(), kNoLimit);
  EXPECT_THAT(Append(accumulator, "no terminator yet"), IsEmpty());
  EXPECT_THAT(Flush(accumulator), ElementsAre("no terminator yet"));
  EXPECT_EQ(accumulator.pending_bytes(), 0u);
  EXPECT_THAT(Flush(accumulator), IsEmpty());
}

TEST(TextAccumulator, WhitespaceAloneYieldsNothing) {
  TextAccumulator accumulator(English(), kNoLimit);
  EXPECT_THAT(Append(accumulator, "  \n "), IsEmpty());
  EXPECT_THAT(Flush(accumulator), IsEmpty());
}

TEST(TextAccumulator, SplitsChineseAsSoonAsTheNextCharacterArrives) {
  TextAccumulator accumulator(Chinese(), kNoLimit);
  EXPECT_THAT(Append(accumulator, "你好。"), IsEmpty());
  EXPECT_THAT(Append(accumulator, "今天天气很好！我们"), ElementsAre("你好。", "今天天气很好！"));
  EXPECT_THAT(Flush(accumulator), ElementsAre("我们"));
}

TEST(TextAccumulator, JoinsAUtf8SequenceSplitAcrossPieces) {
  const std::string text = "日本。";  // 3 bytes per character
  TextAccumulator accumulator(Chinese(), kNoLimit);
  EXPECT_THAT(Append(accumulator, text.substr(0, 1)), IsEmpty());
  EXPECT_EQ(accumulator.pending_bytes(), 1u);
  EXPECT_THAT(Append(accumulator, text.substr(1, 4)), IsEmpty());
  EXPECT_THAT(Append(accumulator, text.substr(5)), IsEmpty());
  EXPECT_THAT(Flush(accumulator), ElementsAre("日本。"));
}

TEST(TextAccumulator, SameSentencesWhereverThePiecesAreCut) {
  const std::string text =
      "Dr. Jones met Mr. Smith at 3.30 p.m. today. \"Is it done?\" he asked. "
      "Yes! It costs $4.50, e.g. less than before.\nNew line here. 你好。Ünïcödé ends 🙂. "
      "Last";
  const std::vector<std::string> whole = English().Split(text);
  for (size_t cut = 1; cut < text.size(); ++cut) {
    EXPECT_EQ(Feed(English(), text, {cut}).all, whole) << "cut at byte " << cut;
  }
  Fed bytewise = Feed(English(), text, EveryByte(text));
  EXPECT_EQ(bytewise.all, whole);
  // Everything but the unfinished "Last" was handed out before the flush.
  EXPECT_EQ(bytewise.before_flush, std::vector<std::string>(whole.begin(), whole.end() - 1));
}

TEST(TextAccumulator, SameChineseSentencesFedByteByByte) {
  const std::string text = "我喜欢Python。It is easy! 你呢？今天天气很好，我们去公园吧。";
  EXPECT_EQ(Feed(Chinese(), text, EveryByte(text)).all, Chinese().Split(text));
}

TEST(TextAccumulator, SameSentencesForRandomPieces) {
  std::string text;
  for (int i = 0; i < 30; ++i) {
    text += "Sentence " + std::to_string(i) + " has Mr. Brown and 2.5 kg, e.g. rice. ";
  }
  const std::vector<std::string> whole = English().Split(text);
  std::mt19937 random(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<size_t> cuts;
    for (size_t at = 1 + random() % 9; at < text.size(); at += 1 + random() % 9) cuts.push_back(at);
    EXPECT_EQ(Feed(English(), text, cuts).all, whole) << "round " << round;
  }
}

TEST(TextAccumulator, CutsOversizedPendingTextAtASpace) {
  TextAccumulator accumulator(English(), 20);
  std::vector<std::string> out = Append(accumulator, "one two three four five six seven eight");
  ASSERT_FALSE(out.empty());
  for (const std::string& piece : out) EXPECT_LE(CountCodePoints(piece), 20u) << piece;
  EXPECT_EQ(out.front(), "one two three four");
  EXPECT_LE(accumulator.pending_bytes(), 20u);
}

TEST(TextAccumulator, PrefersClausePunctuationForAForcedCut) {
  TextAccumulator accumulator(English(), 20);
  EXPECT_THAT(Append(accumulator, "alpha, beta gamma delta epsilon"),
              ElementsAre("alpha,", "beta gamma delta"));
  EXPECT_THAT(Flush(accumulator), ElementsAre("epsilon"));
}

TEST(TextAccumulator, CutsALongCompleteSentenceToo) {
  TextAccumulator accumulator(English(), 20);
  EXPECT_THAT(Append(accumulator, "one two three four five six seven. Next"),
              ElementsAre("one two three four", "five six seven."));
}

TEST(TextAccumulator, CutsLongUnpunctuatedChineseAtTheLimit) {
  TextAccumulator accumulator(Chinese(), 4);
  EXPECT_THAT(Append(accumulator, "一二三四五六"), ElementsAre("一二三四"));
  EXPECT_THAT(Flush(accumulator), ElementsAre("五六"));
}

TEST(TextAccumulator, RejectsBytesThatAreNeverUtf8AndKeepsItsState) {
  TextAccumulator accumulator(English(), kNoLimit);
  EXPECT_THAT(Append(accumulator, "Kept so far"), IsEmpty());
  absl::StatusOr<std::vector<std::string>> bad = accumulator.Append("\xff more");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Append(accumulator, " and more."), IsEmpty());
  EXPECT_THAT(Flush(accumulator), ElementsAre("Kept so far and more."));
}

TEST(TextAccumulator, RejectsASurrogateEvenWhenItsBytesArriveSeparately) {
  TextAccumulator accumulator(English(), kNoLimit);
  // ED A0 80 would be U+D800: ED followed by A0 can never start a valid sequence.
  EXPECT_THAT(Append(accumulator, "\xed"), IsEmpty());
  EXPECT_FALSE(accumulator.Append("\xa0\x80").ok());
}

TEST(TextAccumulator, FlushRejectsTextEndingInsideASequence) {
  TextAccumulator accumulator(English(), kNoLimit);
  EXPECT_THAT(Append(accumulator, "Smile \xf0\x9f"), IsEmpty());
  absl::StatusOr<std::vector<std::string>> flushed = accumulator.Flush();
  ASSERT_FALSE(flushed.ok());
  EXPECT_EQ(flushed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Append(accumulator, "\x99\x82"), IsEmpty());
  EXPECT_THAT(Flush(accumulator), ElementsAre("Smile 🙂"));
}

}  // namespace
}  // namespace voxserve::text
