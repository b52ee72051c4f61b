// Word timings through the service: each segment's words are shifted by the audio of the
// segments before it, reported after that segment's audio, estimated when the engine gives none;
// and the character timings built from them.
#include <gtest/gtest.h>

#include "service/alignment_estimate.h"
#include "service_test_support.h"

namespace voxserve::service {
namespace {

constexpr const char* kThreeSentences = "Alpha one. Bravo two. Charlie three.";
constexpr double kRate = 16000;  // FakeEngine's; one sample per byte of the segment

std::string WordOf(const SegmentTimings& segment, size_t i) {
  const audio::WordTiming& word = segment.words[i];
  return segment.text.substr(word.text_begin, word.text_end - word.text_begin);
}

TEST_F(ServiceTest, LaterSegmentsWordsAreShiftedByTheAudioBeforeThem) {
  ServiceOptions options;
  options.engine.report_words = true;
  Start(options);
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request(kThreeSentences), sink);
  ASSERT_TRUE(sink->WaitComplete());
  ASSERT_TRUE(sink->status().ok()) << sink->status();
  std::vector<SegmentTimings> timings = sink->timings();
  ASSERT_EQ(timings.size(), 3u);
  // "Alpha one." = 10 samples, "Bravo two." = 10, "Charlie three." = 14.
  EXPECT_EQ(timings[1].segment, 1u);
  EXPECT_EQ(timings[1].text, "Bravo two.");
  EXPECT_EQ(timings[1].kind, audio::TimingsKind::kExact);
  EXPECT_DOUBLE_EQ(timings[1].start_s, 10 / kRate);
  EXPECT_DOUBLE_EQ(timings[2].start_s, 20 / kRate);
  EXPECT_DOUBLE_EQ(timings[2].end_s, 34 / kRate);
  ASSERT_EQ(timings[2].words.size(), 2u);
  EXPECT_EQ(WordOf(timings[2], 1), "three.");
  EXPECT_DOUBLE_EQ(timings[2].words[1].start_s, (20 + 8) / kRate);
  EXPECT_DOUBLE_EQ(timings[2].words[1].end_s, 34 / kRate);
  EXPECT_DOUBLE_EQ(timings[0].words[0].start_s, 0);
}

TEST_F(ServiceTest, StreamingReportsEachSegmentsTimingsAfterItsAudio) {
  ServiceOptions options;
  options.engine.report_words = true;
  Start(options);
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request(kThreeSentences, /*streaming=*/true), sink);
  ASSERT_TRUE(sink->WaitComplete());
  ASSERT_TRUE(sink->status().ok()) << sink->status();
  std::vector<size_t> after = sink->timings_after_chunks();
  ASSERT_EQ(after.size(), 3u);
  EXPECT_GE(after[0], 1u);  // the first segment's audio (with the WAV header) came first
  EXPECT_GT(after[1], after[0]);
  EXPECT_GT(after[2], after[1]);
}

TEST_F(ServiceTest, AnEngineWithoutTimingsGetsEstimatedWordsSpreadOverEachSegment) {
  Start();
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request(kThreeSentences), sink);
  ASSERT_TRUE(sink->WaitComplete());
  ASSERT_TRUE(sink->status().ok()) << sink->status();
  std::vector<SegmentTimings> timings = sink->timings();
  ASSERT_EQ(timings.size(), 3u);
  EXPECT_EQ(timings[2].kind, audio::TimingsKind::kEstimated);
  ASSERT_EQ(timings[2].words.size(), 2u);
  EXPECT_EQ(WordOf(timings[2], 0), "Charlie");
  // 7 of the segment's 13 non-space code points, from where the segment starts.
  EXPECT_DOUBLE_EQ(timings[2].words[0].start_s, 20 / kRate);
  EXPECT_NEAR(timings[2].words[0].end_s, (20 + 14 * 7.0 / 13) / kRate, 1e-12);
  EXPECT_NEAR(timings[2].words[1].end_s, 34 / kRate, 1e-12);
}

TEST(EstimateWordTimingsTest, SharesTheDurationByCodePointsAndSkipsSpaces) {
  auto words = EstimateWordTimings("  añb  cd ", 5.0);  // 3 + 2 code points
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0].text_begin, 2u);
  EXPECT_EQ(words[0].text_end, 6u);
  EXPECT_DOUBLE_EQ(words[0].end_s, 3.0);
  EXPECT_DOUBLE_EQ(words[1].start_s, 3.0);
  EXPECT_DOUBLE_EQ(words[1].end_s, 5.0);
  EXPECT_TRUE(EstimateWordTimings("   ", 1.0).empty());
}

TEST(AlignCharactersTest, WordsCharactersShareTheirSpanAndGapsTheSilence) {
  std::vector<audio::WordTiming> words = {{0, 2, 1.0, 1.2}, {3, 5, 1.5, 1.9}};
  CharacterAlignment chars = AlignCharacters("ab cd.", words, 1.0, 2.0);
  ASSERT_EQ(chars.characters.size(), 6u);
  EXPECT_DOUBLE_EQ(chars.start_seconds[1], 1.1);
  EXPECT_DOUBLE_EQ(chars.end_seconds[1], 1.2);
  EXPECT_EQ(chars.characters[2], " ");
  EXPECT_DOUBLE_EQ(chars.start_seconds[2], 1.2);
  EXPECT_DOUBLE_EQ(chars.end_seconds[2], 1.5);
  EXPECT_DOUBLE_EQ(chars.start_seconds[3], 1.5);
  EXPECT_EQ(chars.characters[5], ".");
  EXPECT_DOUBLE_EQ(chars.start_seconds[5], 1.9);
  EXPECT_DOUBLE_EQ(chars.end_seconds[5], 2.0);
}

TEST(EstimateAlignmentTest, UsesTheSegmentsWordTimingsWhereTheyCoverTheText) {
  SegmentTimings first{0, "Hi.", audio::TimingsKind::kExact, 10.0, 11.0, {{0, 2, 10.2, 10.8}}};
  SegmentTimings second{1, "Yo", audio::TimingsKind::kExact, 11.0, 12.0, {{0, 2, 11.0, 11.5}}};
  std::vector<SegmentTimings> timings = {first, second};
  CharacterAlignment chars = EstimateAlignment("Hi. Yo", 10.0, 2.0, timings);
  ASSERT_EQ(chars.characters.size(), 6u);
  EXPECT_DOUBLE_EQ(chars.start_seconds[0], 10.2);  // not 10.0: the engine's "Hi" starts later
  EXPECT_DOUBLE_EQ(chars.end_seconds[1], 10.8);
  EXPECT_DOUBLE_EQ(chars.start_seconds[4], 11.0);
  EXPECT_DOUBLE_EQ(chars.end_seconds[5], 11.5);
}

TEST(EstimateAlignmentTest, FallsBackToTheEvenEstimateWhenASegmentIsNotInTheText) {
  SegmentTimings other{0, "elsewhere", audio::TimingsKind::kExact, 0.0, 1.0, {{0, 9, 0.2, 0.8}}};
  std::vector<SegmentTimings> timings = {other};
  CharacterAlignment chars = EstimateAlignment("ab", 0.0, 2.0, timings);
  ASSERT_EQ(chars.characters.size(), 2u);
  EXPECT_DOUBLE_EQ(chars.start_seconds[1], 1.0);
}

}  // namespace
}  // namespace voxserve::service
