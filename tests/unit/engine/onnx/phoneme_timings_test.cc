// Phonemes with lengths → word timings of the text, and the fallback when the words disagree.
#include "engine/onnx/phoneme_timings.h"

#include <gtest/gtest.h>

namespace voxserve::engine::onnx {
namespace {

TEST(PhonemeTimingsTest, PhonemeWordsMapOneToOneOntoTheTextsWords) {
  // "ab, c." spoken as ^ a b , ␠ c . $ with 10 samples each at 10 Hz.
  std::vector<TimedPhoneme> phonemes = {{U' ', 10}, {U'a', 10}, {U'b', 10}, {U',', 10},
                                        {U' ', 10}, {U'c', 10}, {U'.', 10}, {U' ', 10}};
  PhonemeWordTimings timings = WordTimingsFromPhonemes("ab, c.", phonemes, 10, true);
  EXPECT_EQ(timings.kind, audio::TimingsKind::kExact);
  ASSERT_EQ(timings.words.size(), 2u);
  EXPECT_EQ(timings.words[0].text_begin, 0u);
  EXPECT_EQ(timings.words[0].text_end, 2u);  // the comma is not part of the word
  EXPECT_DOUBLE_EQ(timings.words[0].start_s, 1.0);
  EXPECT_DOUBLE_EQ(timings.words[0].end_s, 3.0);
  EXPECT_EQ(timings.words[1].text_begin, 4u);
  EXPECT_DOUBLE_EQ(timings.words[1].start_s, 5.0);
  EXPECT_DOUBLE_EQ(timings.words[1].end_s, 6.0);
}

TEST(PhonemeTimingsTest, ACountMismatchSharesTheSpokenSpanByCharacters) {
  // "42 go": espeak says "forty two go", three phoneme words for two text words.
  std::vector<TimedPhoneme> phonemes = {{U'f', 10}, {U' ', 0}, {U't', 10}, {U' ', 0}, {U'g', 10}};
  PhonemeWordTimings timings = WordTimingsFromPhonemes("42 go", phonemes, 10, true);
  EXPECT_EQ(timings.kind, audio::TimingsKind::kEstimated);
  ASSERT_EQ(timings.words.size(), 2u);
  EXPECT_DOUBLE_EQ(timings.words[0].start_s, 0.0);
  EXPECT_DOUBLE_EQ(timings.words[0].end_s, 1.5);
  EXPECT_DOUBLE_EQ(timings.words[1].end_s, 3.0);
}

TEST(PhonemeTimingsTest, WithoutLengthsPhonemesShareTheAudioEvenly) {
  std::vector<TimedPhoneme> phonemes = {{U'a', 0}, {U' ', 0}, {U'b', 0}, {U'c', 0}};
  ShareEvenly(phonemes, 40);
  PhonemeWordTimings timings = WordTimingsFromPhonemes("a bc", phonemes, 10, false);
  EXPECT_EQ(timings.kind, audio::TimingsKind::kEstimated);
  ASSERT_EQ(timings.words.size(), 2u);
  EXPECT_DOUBLE_EQ(timings.words[1].start_s, 2.0);
  EXPECT_DOUBLE_EQ(timings.words[1].end_s, 4.0);
}

TEST(PhonemeTimingsTest, NothingSpokenOrNoWordsGivesNoTimings) {
  std::vector<TimedPhoneme> phonemes = {{U'.', 10}};
  EXPECT_EQ(WordTimingsFromPhonemes("...", phonemes, 10, true).kind, audio::TimingsKind::kNone);
  EXPECT_TRUE(WordTimingsFromPhonemes("a", {}, 10, true).words.empty());
}

}  // namespace
}  // namespace voxserve::engine::onnx
