// Names clients may use for voices beyond engine ids: the built-in ones ("default",
// "zh_female", ...), and how /v1/voices filters them (VoiceFilter, for REST and gRPC alike).
#include <gmock/gmock.h>

#include "service/voice_filter.h"
#include "service_test_support.h"

namespace voxserve::service {
namespace {

using ::testing::Contains;
using ::testing::Each;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::Not;

// Voices as espeak-ng names them, so the built-in names have something to stand for.
ServiceOptions EspeakLikeVoices() {
  ServiceOptions options;
  options.engine.voices = {"en-us", "en-us+f3", "en-gb", "cmn", "cmn+f3", "cmn+m3"};
  return options;
}

std::string EngineVoiceFor(TtsService& service, test_support::FakeEngine& engine,
                           const std::string& model, const std::string& voice) {
  SynthesisRequest request;
  request.model = model;
  request.voice = voice;
  request.text = "Hi.";
  request.format = audio::AudioFormat::kWav;
  auto sink = std::make_shared<RecordingSink>();
  auto job = service.Synthesize(std::move(request), sink);
  if (!job.ok()) return "refused: " + std::string(job.status().message());
  if (!sink->WaitComplete()) return "did not finish";
  return engine.calls().back().voice_ids.front();
}

TEST_F(ServiceTest, BuiltInNamesStandForEspeakVoices) {
  Start(EspeakLikeVoices());
  EXPECT_EQ(EngineVoiceFor(*service_, *engine_, "", "zh_female"), "cmn+f3");
  EXPECT_EQ(EngineVoiceFor(*service_, *engine_, "tts-1", "zh_male"), "cmn+m3");
  EXPECT_EQ(EngineVoiceFor(*service_, *engine_, "fake", "en_female"), "en-us+f3");
  EXPECT_EQ(EngineVoiceFor(*service_, *engine_, "", "en_gb"), "en-gb");
  EXPECT_EQ(EngineVoiceFor(*service_, *engine_, "", "zh"), "cmn");
}

TEST_F(ServiceTest, DefaultIsTheModelsDefaultVoice) {
  Start();
  EXPECT_EQ(EngineVoiceFor(*service_, *engine_, "", "default"), "alice");
  EXPECT_EQ(EngineVoiceFor(*service_, *engine_, "fake", "default"), "alice");
}

TEST_F(ServiceTest, ConfiguredAliasesOverrideBuiltInNames) {
  ServiceOptions options = EspeakLikeVoices();
  options.extra_aliases["zh_female"] = {"", "cmn+m3"};
  options.extra_aliases["default"] = {"", "en-gb"};
  Start(options);
  EXPECT_EQ(EngineVoiceFor(*service_, *engine_, "", "zh_female"), "cmn+m3");
  EXPECT_EQ(EngineVoiceFor(*service_, *engine_, "", "default"), "en-gb");
}

TEST_F(ServiceTest, ABuiltInNameWithoutItsVoiceIsNotFound) {
  Start();  // voices alice and bob: no cmn+f3
  EXPECT_THAT(EngineVoiceFor(*service_, *engine_, "", "zh_female"),
              ::testing::HasSubstr("refused: voice 'zh_female' does not exist"));
}

TEST_F(ServiceTest, VoiceListingShowsTheBuiltInNamesThatResolve) {
  Start(EspeakLikeVoices());
  std::map<std::string, std::string> alias_of;
  for (const VoiceListing& voice : service_->ListVoices()) alias_of[voice.id] = voice.alias_of;
  EXPECT_EQ(alias_of.at("zh_female"), "cmn+f3");
  EXPECT_EQ(alias_of.at("en_us"), "en-us");
  EXPECT_EQ(alias_of.at("default"), "en-us");
  EXPECT_FALSE(alias_of.contains("zh_hk"));  // no yue here
}

TEST_F(ServiceTest, ListVoicesByOpenAiModelNameFindsTheDefaultModelsVoices) {
  Start();
  std::vector<VoiceListing> voices = service_->ListVoices({.model = "tts-1"});
  EXPECT_THAT(voices, Not(IsEmpty()));
  EXPECT_THAT(voices, Each(Field(&VoiceListing::model, "fake")));
  EXPECT_THAT(service_->ListVoices({.model = "other"}), IsEmpty());
}

TEST_F(ServiceTest, ListVoicesByLanguageIgnoresCaseAndFindsNarrowerTags) {
  Start();  // FakeEngine's voices are all en-us
  for (const char* language : {"en", "EN", "en-US", "en_us"}) {
    EXPECT_THAT(service_->ListVoices({.language = language}),
                Contains(Field(&VoiceListing::id, "alice")))
        << language;
  }
  EXPECT_THAT(service_->ListVoices({.language = "e"}), IsEmpty());
  EXPECT_THAT(service_->ListVoices({.language = "zh"}), IsEmpty());
}

TEST(LanguageMatches, ATagFindsItselfAndNarrowerTags) {
  EXPECT_TRUE(LanguageMatches("en-us", "en"));
  EXPECT_TRUE(LanguageMatches("en-gb-x-rp", "en-gb"));
  EXPECT_TRUE(LanguageMatches("en_US", "EN-us"));
  EXPECT_FALSE(LanguageMatches("en-us", "en-gb"));
  EXPECT_FALSE(LanguageMatches("eng", "en"));  // a prefix of letters is not a narrower tag
}

TEST(LanguageMatches, AMacrolanguageFindsItsIndividualLanguages) {
  EXPECT_TRUE(LanguageMatches("cmn", "zh"));
  EXPECT_TRUE(LanguageMatches("yue", "ZH"));
  EXPECT_TRUE(LanguageMatches("cmn-latn-pinyin", "zh"));
  EXPECT_TRUE(LanguageMatches("zh", "zh"));
  EXPECT_TRUE(LanguageMatches("nb", "no"));
  EXPECT_FALSE(LanguageMatches("cmn", "ja"));
  EXPECT_FALSE(LanguageMatches("zh", "cmn"));  // the individual language is narrower
}

TEST(LanguageMatches, EmptyMatchesEverything) { EXPECT_TRUE(LanguageMatches("haw", "")); }

}  // namespace
}  // namespace voxserve::service
