// espeak-ng's word events as word timings: the conversion on its own (positions in code points,
// the quirks of 1.51's events), then through the real library.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "engine/espeak/espeak_engine.h"
#include "engine/espeak/espeak_word_events.h"

namespace voxserve::engine {
namespace {

std::string_view WordText(std::string_view text, const WordTiming& word) {
  return text.substr(word.text_begin, word.text_end - word.text_begin);
}

double Rms(const std::vector<float>& samples, double from_s, double to_s, int rate) {
  size_t begin = static_cast<size_t>(from_s * rate);
  size_t end = std::min(samples.size(), static_cast<size_t>(to_s * rate));
  double sum = 0;
  for (size_t i = begin; i < end; ++i) sum += static_cast<double>(samples[i]) * samples[i];
  return end > begin ? std::sqrt(sum / static_cast<double>(end - begin)) : 0;
}

TEST(WordTimingsFromEventsTest, MapsCodePointPositionsToByteOffsets) {
  const std::string text = "Café naïve";  // é and ï take two bytes each
  std::vector<float> samples(1000, 0.5f);
  std::vector<EspeakWordEvent> events = {{1, 4, 0}, {6, 5, 20}};
  auto words = WordTimingsFromEvents(text, events, samples, 1000);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(WordText(text, words[0]), "Café");
  EXPECT_EQ(WordText(text, words[1]), "naïve");
  EXPECT_DOUBLE_EQ(words[0].start_s, 0.0);
  EXPECT_DOUBLE_EQ(words[0].end_s, 0.02);  // up to the next word
  EXPECT_DOUBLE_EQ(words[1].start_s, 0.02);
  EXPECT_DOUBLE_EQ(words[1].end_s, 1.0);  // up to the end of the audio
}

TEST(WordTimingsFromEventsTest, TrailingSilenceBelongsToNoWord) {
  std::vector<float> samples(1000, 0.0f);
  std::fill(samples.begin(), samples.begin() + 300, 0.3f);        // "one", then a pause
  std::fill(samples.begin() + 500, samples.begin() + 800, 0.3f);  // "two", then silence
  std::vector<EspeakWordEvent> events = {{1, 3, 0}, {5, 3, 500}};
  auto words = WordTimingsFromEvents("one two", events, samples, 1000);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_DOUBLE_EQ(words[0].end_s, 0.3);
  EXPECT_DOUBLE_EQ(words[1].end_s, 0.8);
}

TEST(WordTimingsFromEventsTest, AWordReportedBackwardsIsTheNextWordAndEmptyOnesAreDropped) {
  // espeak-ng 1.51 on "déjà vu, ok": "vu" comes at déjà's position + 1, then an empty word.
  const std::string text = "déjà vu, ok";
  std::vector<float> samples(2000, 0.5f);
  std::vector<EspeakWordEvent> events = {{1, 4, 0}, {2, 4, 300}, {8, 0, 700}, {10, 2, 900}};
  auto words = WordTimingsFromEvents(text, events, samples, 1000);
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(WordText(text, words[0]), "déjà");
  EXPECT_EQ(WordText(text, words[1]), "vu");
  EXPECT_DOUBLE_EQ(words[1].start_s, 0.3);
  EXPECT_EQ(WordText(text, words[2]), "ok");
  EXPECT_LE(words[1].end_s, words[2].start_s);
}

TEST(WordTimingsFromEventsTest, PositionsPastTheTextOrAudioAreClamped) {
  std::vector<float> samples(100, 0.5f);
  std::vector<EspeakWordEvent> events = {{1, 99, 5000}};
  auto words = WordTimingsFromEvents("hi", events, samples, 1000);
  ASSERT_EQ(words.size(), 1u);
  EXPECT_EQ(words[0].text_end, 2u);
  EXPECT_DOUBLE_EQ(words[0].start_s, 0.1);
  EXPECT_DOUBLE_EQ(words[0].end_s, 0.1);
}

class EspeakTimingsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = EspeakEngine::Create({});
    ASSERT_TRUE(created.ok()) << created.status();
    engine_ = std::move(*created);
  }

  audio::PcmAudio Speak(std::string_view text, double speed = 1.0) {
    SegmentInput input{text, "en-us", speed};
    auto results = engine_->Synthesize({&input, 1});
    EXPECT_TRUE(results[0].ok()) << results[0].status();
    return results[0].ok() ? *results[0] : audio::PcmAudio{};
  }

  std::unique_ptr<EspeakEngine> engine_;
};

TEST_F(EspeakTimingsTest, EveryWordGetsAnExactIncreasingSpanInsideTheAudio) {
  const std::string text = "The quick brown fox jumps over the lazy dog.";
  audio::PcmAudio pcm = Speak(text);
  EXPECT_EQ(pcm.timings, TimingsKind::kExact);
  ASSERT_EQ(pcm.words.size(), 9u);
  EXPECT_EQ(WordText(text, pcm.words[0]), "The");
  EXPECT_EQ(WordText(text, pcm.words[8]), "dog");
  for (size_t i = 0; i < pcm.words.size(); ++i) {
    const WordTiming& word = pcm.words[i];
    EXPECT_LT(word.start_s, word.end_s) << i;
    EXPECT_LE(word.end_s, pcm.DurationSeconds()) << i;
    if (i > 0) {
      EXPECT_GT(word.start_s, pcm.words[i - 1].start_s) << i;
    }
    // espeak's speech is above -30 dBFS where it speaks.
    EXPECT_GT(Rms(pcm.samples, word.start_s, word.end_s, pcm.sample_rate), 0.03) << i;
  }
}

TEST_F(EspeakTimingsTest, AClausePauseFallsBetweenWords) {
  const std::string text = "First, second";
  audio::PcmAudio pcm = Speak(text);
  ASSERT_EQ(pcm.words.size(), 2u);
  double gap = pcm.words[1].start_s - pcm.words[0].end_s;
  EXPECT_GT(gap, 0.05);  // espeak pauses at a comma
  EXPECT_LT(Rms(pcm.samples, pcm.words[0].end_s, pcm.words[1].start_s, pcm.sample_rate), 0.005);
}

TEST_F(EspeakTimingsTest, TimingsFollowTheStretchBelowEspeaksSlowestRate) {
  const std::string text = "Slow and steady.";
  audio::PcmAudio normal = Speak(text);
  audio::PcmAudio slow = Speak(text, 0.25);  // 44 wpm: espeak at 80 wpm, then sonic
  ASSERT_EQ(slow.words.size(), 3u);
  ASSERT_EQ(normal.words.size(), 3u);
  EXPECT_GT(slow.words[2].start_s, 2.0 * normal.words[2].start_s);
  EXPECT_LE(slow.words[2].end_s, slow.DurationSeconds());
  EXPECT_GT(Rms(slow.samples, slow.words[1].start_s, slow.words[1].end_s, slow.sample_rate), 0.03);
}

}  // namespace
}  // namespace voxserve::engine
