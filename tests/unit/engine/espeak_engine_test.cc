#include "engine/espeak/espeak_engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/engine_factory.h"

namespace voxserve::engine {
namespace {

double Rms(const std::vector<float>& samples) {
  double sum = 0;
  for (float s : samples) sum += static_cast<double>(s) * s;
  return samples.empty() ? 0 : std::sqrt(sum / static_cast<double>(samples.size()));
}

class EspeakEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = EspeakEngine::Create({});
    ASSERT_TRUE(created.ok()) << created.status();
    engine_ = std::move(*created);
  }

  audio::PcmAudio SynthesizeOk(std::string_view text, std::string_view voice, double speed = 1.0) {
    SegmentInput input{text, voice, speed};
    auto results = engine_->Synthesize({&input, 1});
    EXPECT_EQ(results.size(), 1u);
    EXPECT_TRUE(results[0].ok()) << results[0].status();
    return results[0].ok() ? *results[0] : audio::PcmAudio{};
  }

  std::unique_ptr<EspeakEngine> engine_;
};

TEST_F(EspeakEngineTest, OffersEveryInstalledVoiceIncludingMandarin) {
  const ModelInfo& info = engine_->info();
  EXPECT_EQ(info.engine, "espeak");
  EXPECT_GT(info.voices.size(), 100u);
  auto has = [&](const std::string& id) {
    return std::any_of(info.voices.begin(), info.voices.end(),
                       [&](const VoiceInfo& v) { return v.id == id; });
  };
  EXPECT_TRUE(has("cmn"));
  EXPECT_TRUE(has("en-us"));
  EXPECT_TRUE(has("en-gb"));
  for (const VoiceInfo& voice : info.voices) EXPECT_EQ(voice.sample_rate, 22050) << voice.id;
}

TEST_F(EspeakEngineTest, VoiceIdsAreUnique) {
  std::vector<std::string> ids;
  for (const VoiceInfo& voice : engine_->info().voices) ids.push_back(voice.id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
}

TEST_F(EspeakEngineTest, AcceptsListedVoicesAndKnownVariantsOnly) {
  EXPECT_TRUE(engine_->AcceptsVoice("en-us"));
  EXPECT_TRUE(engine_->AcceptsVoice("en-us+f3"));
  EXPECT_TRUE(engine_->AcceptsVoice("cmn+m1"));
  EXPECT_FALSE(engine_->AcceptsVoice("en-us+nonexistent"));
  EXPECT_FALSE(engine_->AcceptsVoice("klingon"));
  EXPECT_FALSE(engine_->AcceptsVoice(""));
}

TEST_F(EspeakEngineTest, SynthesizesAudibleSpeechOfPlausibleLength) {
  audio::PcmAudio pcm = SynthesizeOk("Hello world.", "en-us");
  EXPECT_EQ(pcm.sample_rate, 22050);
  EXPECT_GT(pcm.DurationSeconds(), 0.4);
  EXPECT_LT(pcm.DurationSeconds(), 3.0);
  EXPECT_GT(Rms(pcm.samples), 0.02);
}

TEST_F(EspeakEngineTest, SynthesizesMandarin) {
  audio::PcmAudio pcm = SynthesizeOk("你好，世界。", "cmn");
  EXPECT_GT(pcm.DurationSeconds(), 0.5);
  EXPECT_GT(Rms(pcm.samples), 0.02);
}

TEST_F(EspeakEngineTest, VariantsChangeTheAudio) {
  audio::PcmAudio plain = SynthesizeOk("Hello world.", "en-us");
  audio::PcmAudio female = SynthesizeOk("Hello world.", "en-us+f3");
  EXPECT_NE(plain.samples, female.samples);
}

TEST_F(EspeakEngineTest, SpeedScalesDurationAcrossOpenAisRange) {
  const char* text = "The quick brown fox jumps over the lazy dog.";
  double normal = SynthesizeOk(text, "en-us", 1.0).DurationSeconds();
  // 0.25 is below espeak's 80 wpm floor: the rest comes from time stretching.
  EXPECT_NEAR(SynthesizeOk(text, "en-us", 0.25).DurationSeconds() / normal, 4.0, 0.8);
  EXPECT_NEAR(SynthesizeOk(text, "en-us", 0.5).DurationSeconds() / normal, 2.0, 0.4);
  EXPECT_NEAR(SynthesizeOk(text, "en-us", 2.0).DurationSeconds() / normal, 0.5, 0.12);
  EXPECT_NEAR(SynthesizeOk(text, "en-us", 4.0).DurationSeconds() / normal, 0.25, 0.08);
}

TEST_F(EspeakEngineTest, UnknownVoiceFailsThatSegmentOnly) {
  SegmentInput inputs[] = {{"One.", "klingon", 1.0}};
  auto results = engine_->Synthesize(inputs);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(core::DetailOf(results[0].status()).param, "voice");
}

TEST_F(EspeakEngineTest, WarmupRunsTheGivenTexts) {
  std::vector<std::string> texts = {"Warm up.", "Second."};
  EXPECT_TRUE(engine_->Warmup(texts).ok());
}

TEST_F(EspeakEngineTest, OnlyOneEngineMayExistBecauseTheLibraryIsGlobal) {
  auto second = EspeakEngine::Create({});
  EXPECT_FALSE(second.ok());
}

// Issue 29: libespeak-ng carried state from one synthesis into the next ("One two." lasted
// 0.837 s alone and 0.886 s after a longer sentence, and no two runs gave the same bytes); each
// synthesis now starts from the state the espeak-ng command line starts from.
TEST_F(EspeakEngineTest, TheSameRequestGivesIdenticalSamplesWhateverCameBefore) {
  const audio::PcmAudio first = SynthesizeOk("One two.", "en-us");
  SynthesizeOk("The quick brown fox jumps over the lazy dog.", "en-us");
  const audio::PcmAudio second = SynthesizeOk("One two.", "en-us");
  SynthesizeOk("你好，今天天气很好。", "cmn+f3", 1.7);
  SynthesizeOk("Whispered, slowly.", "en-gb+whisper", 0.5);
  const audio::PcmAudio third = SynthesizeOk("One two.", "en-us");
  ASSERT_FALSE(first.samples.empty());
  EXPECT_EQ(second.samples, first.samples);
  EXPECT_EQ(third.samples, first.samples);
  ASSERT_EQ(third.words.size(), first.words.size());
  for (size_t i = 0; i < first.words.size(); ++i) {
    EXPECT_EQ(third.words[i].start_s, first.words[i].start_s) << i;
    EXPECT_EQ(third.words[i].end_s, first.words[i].end_s) << i;
  }
  // A breathy variant's noise (rand() inside the library) repeats too.
  EXPECT_EQ(SynthesizeOk("Whispered, slowly.", "en-gb+whisper", 0.5).samples,
            SynthesizeOk("Whispered, slowly.", "en-gb+whisper", 0.5).samples);
}

TEST(EspeakEngineCreate, ANewEngineSpeaksTheSameSamplesAsTheOneBefore) {
  // As a restarted worker process (or another one) would: a fresh template, the same state.
  std::vector<float> before;
  {
    auto engine = EspeakEngine::Create({});
    ASSERT_TRUE(engine.ok()) << engine.status();
    SegmentInput other{"Something else entirely, first.", "en-us", 1.0};
    ASSERT_TRUE((*engine)->Synthesize({&other, 1})[0].ok());
    SegmentInput input{"One two.", "en-us", 1.0};
    auto audio = (*engine)->Synthesize({&input, 1});
    ASSERT_TRUE(audio[0].ok()) << audio[0].status();
    before = audio[0]->samples;
  }
  auto engine = EspeakEngine::Create({});
  ASSERT_TRUE(engine.ok()) << engine.status();
  SegmentInput input{"One two.", "en-us", 1.0};
  auto audio = (*engine)->Synthesize({&input, 1});
  ASSERT_TRUE(audio[0].ok()) << audio[0].status();
  EXPECT_EQ(audio[0]->samples, before);
}

TEST(EspeakEngineCreate, RejectsAnUninstalledDefaultVoice) {
  EspeakConfig config;
  config.default_voice = "klingon";
  auto created = EspeakEngine::Create(config);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(std::string(created.status().message()).find("klingon"), std::string::npos);
  // A failed Create leaves the library free for the next one.
  EXPECT_TRUE(EspeakEngine::Create({}).ok());
}

TEST(EngineFactory, BuildsEspeakAndRejectsUnknownEnginesAndOptions) {
  EXPECT_TRUE(CreateEngine({"espeak", "espeak", "", {}}).ok());
  auto unknown = CreateEngine({"m", "tacotron", "", {}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(std::string(unknown.status().message()).find("available: espeak"), std::string::npos);
  auto bad_option = CreateEngine({"m", "espeak", "", {{"colour", "blue"}}});
  ASSERT_FALSE(bad_option.ok());
  EXPECT_NE(std::string(bad_option.status().message()).find("colour"), std::string::npos);
}

// The service says "model <id>: " when it reports a load error; the engine saying it too gave
// "model m: model m: unknown espeak option".
TEST(EngineFactory, ErrorsLeaveNamingTheModelToTheCaller) {
  for (const EngineSpec& spec :
       {EngineSpec{"m", "tacotron", "", {}}, EngineSpec{"m", "espeak", "", {{"colour", "blue"}}},
        EngineSpec{"m", "piper", "", {{"colour", "blue"}}}, EngineSpec{"m", "kokoro", "", {}}}) {
    auto created = CreateEngine(spec);
    ASSERT_FALSE(created.ok()) << spec.engine;
    EXPECT_EQ(std::string(created.status().message()).find("model m:"), std::string::npos)
        << created.status();
  }
}

// Zero crossings per second: a higher base pitch crosses zero more often.
double CrossingsPerSecond(const audio::PcmAudio& pcm) {
  size_t crossings = 0;
  for (size_t i = 1; i < pcm.samples.size(); ++i) {
    if ((pcm.samples[i - 1] < 0) != (pcm.samples[i] < 0)) ++crossings;
  }
  return static_cast<double>(crossings) / pcm.DurationSeconds();
}

TEST_F(EspeakEngineTest, PitchRaisesTheVoiceAndOneLeavesItAlone) {
  EXPECT_TRUE(engine_->info().controls_pitch);
  EXPECT_FALSE(engine_->info().speaks_ipa);
  audio::PcmAudio plain = SynthesizeOk("A long vowel, aaah.", "en-us");
  SegmentInput same{"A long vowel, aaah.", "en-us", 1.0};
  same.pitch = 1.0;
  EXPECT_EQ(engine_->Synthesize({&same, 1})[0]->samples, plain.samples);
  SegmentInput high = same;
  high.pitch = 1.8;
  auto raised = engine_->Synthesize({&high, 1});
  ASSERT_TRUE(raised[0].ok()) << raised[0].status();
  EXPECT_GT(CrossingsPerSecond(*raised[0]), CrossingsPerSecond(plain) * 1.1);
}

TEST_F(EspeakEngineTest, IpaPhonemesAreRefusedNamingSsml) {
  SegmentInput input{"tomato", "en-us", 1.0};
  input.phonemes = "t\u0259\u02c8m\u0251\u02d0to\u028a";
  auto results = engine_->Synthesize({&input, 1});
  ASSERT_FALSE(results[0].ok());
  EXPECT_EQ(core::DetailOf(results[0].status()).code, "ssml_unsupported");
}

}  // namespace
}  // namespace voxserve::engine
