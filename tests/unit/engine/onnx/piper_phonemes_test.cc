// Piper's ids exactly as piper-phonemize builds them, and its .onnx.json as Piper reads it.
#include "engine/onnx/piper_phonemes.h"

#include <gtest/gtest.h>

#include "engine/onnx/code_points.h"
#include "engine/onnx/piper_config.h"
#include "test_models.h"

namespace voxserve::engine::onnx {
namespace {

PiperVoiceConfig TestVoiceConfig() {
  auto config = PiperVoiceConfig::Load(testing::ModelPath("models/en_US-test-medium.onnx.json"));
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : PiperVoiceConfig{};
}

std::vector<std::u32string> SentencesOf(const std::string& text, const std::string& voice) {
  auto phonemizer = EspeakPhonemizer::Create("");
  EXPECT_TRUE(phonemizer.ok());
  auto clauses = (*phonemizer)->Phonemize(text, voice);
  EXPECT_TRUE(clauses.ok());
  return PiperSentences(*clauses, {});
}

TEST(PiperPhonemesTest, HelloWorldGivesPipersIdSequence) {
  PiperVoiceConfig config = TestVoiceConfig();
  auto sentences = SentencesOf("Hello world.", "en-us");
  ASSERT_EQ(sentences.size(), 1u);
  EXPECT_EQ(EncodeUtf8(sentences[0]), "həlˈoʊ wˈɜːld.");
  // ^ _ h _ ə _ l _ ˈ _ o _ ʊ _ ␠ _ w _ ˈ _ ɜ _ ː _ l _ d _ . _ $ with Piper's default map:
  // h=20 ə=59 l=24 ˈ=120 o=27 ʊ=100 space=3 w=35 ɜ=62 ː=122 d=17 .=10, pad 0, bos 1, eos 2.
  std::vector<int64_t> expected = {1,  0, 20,  0, 59, 0, 24,  0, 120, 0, 27, 0, 100, 0, 3, 0,
                                   35, 0, 120, 0, 62, 0, 122, 0, 24,  0, 17, 0, 10,  0, 2};
  PiperIds ids = PiperPhonemeIds(sentences[0], config.phoneme_id_map);
  EXPECT_EQ(ids.ids, expected);
  EXPECT_EQ(ids.missing, 0u);
}

TEST(PiperPhonemesTest, ClausesJoinIntoSentencesWithTheirPunctuation) {
  auto sentences = SentencesOf("Hello world, how are you? Fine.", "en-us");
  ASSERT_EQ(sentences.size(), 2u);
  EXPECT_EQ(EncodeUtf8(sentences[0]), "həlˈoʊ wˈɜːld, hˈaʊ ɑːɹ juː?");
  EXPECT_EQ(EncodeUtf8(sentences[1]), "fˈaɪn.");
}

TEST(PiperPhonemesTest, GermanSentenceIds) {
  PiperVoiceConfig config = TestVoiceConfig();
  auto sentences = SentencesOf("Guten Tag!", "de");
  ASSERT_EQ(sentences.size(), 1u);
  EXPECT_EQ(EncodeUtf8(sentences[0]), "ɡˈuːtən tˈɑːk!");
  // ɡ=66 ˈ=120 u=33 ː=122 t=32 ə=59 n=26 space=3 ɑ=51 k=23 !=4
  std::vector<int64_t> expected = {1, 0, 66, 0, 120, 0, 33, 0, 122, 0, 32, 0, 59, 0, 26, 0,
                                   3, 0, 32, 0, 120, 0, 51, 0, 122, 0, 23, 0, 4,  0, 2};
  EXPECT_EQ(PiperPhonemeIds(sentences[0], config.phoneme_id_map).ids, expected);
}

TEST(PiperPhonemesTest, MandarinToneNumbersAreIds) {
  PiperVoiceConfig config = TestVoiceConfig();
  auto sentences = SentencesOf("我是。", "cmn");
  ASSERT_EQ(sentences.size(), 1u);
  EXPECT_EQ(EncodeUtf8(sentences[0]), "wˈo2 s.ˈi.5.");
  // w=35 ˈ=120 o=27 2=132 space=3 s=31 .=10 i=21 5=135
  std::vector<int64_t> expected = {1,  0, 35,  0, 120, 0, 27, 0, 132, 0, 3,  0, 31, 0,
                                   10, 0, 120, 0, 21,  0, 10, 0, 135, 0, 10, 0, 2};
  EXPECT_EQ(PiperPhonemeIds(sentences[0], config.phoneme_id_map).ids, expected);
}

TEST(PiperPhonemesTest, UnknownPhonemesAreSkippedAndCounted) {
  PhonemeIdMap map = {{U'_', {0}}, {U'^', {1}}, {U'$', {2}}, {U'a', {5}}};
  PiperIds ids = PiperPhonemeIds(U"aΩa", map);
  EXPECT_EQ(ids.ids, (std::vector<int64_t>{1, 0, 5, 0, 5, 0, 2}));
  EXPECT_EQ(ids.missing, 1u);
}

TEST(PiperPhonemesTest, MultiIdPhonemesAreAllEmitted) {
  PhonemeIdMap map = {{U'_', {0}}, {U'^', {1}}, {U'$', {2}}, {U'a', {5, 6}}};
  EXPECT_EQ(PiperPhonemeIds(U"a", map).ids, (std::vector<int64_t>{1, 0, 5, 6, 0, 2}));
}

TEST(PiperPhonemesTest, PhonemesAreDecomposedAndMapped) {
  std::vector<PhonemizedClause> clauses = {{"ça", ClauseEnd::kPeriod}};
  auto sentences = PiperSentences(clauses, {{U'a', U"ɐ"}});
  ASSERT_EQ(sentences.size(), 1u);
  EXPECT_EQ(sentences[0], U"c\u0327ɐ.");  // NFD: ç = c + combining cedilla
}

TEST(PiperPhonemesTest, TextPhonemeTypeUsesTheTextsCodePoints) {
  EXPECT_EQ(PiperTextPhonemes("Ça va", {}), U"C\u0327a va");
}

TEST(PiperVoiceConfigTest, ReadsTheKeysPiperWrites) {
  PiperVoiceConfig config = TestVoiceConfig();
  EXPECT_EQ(config.sample_rate, testing::kPiperRate);
  EXPECT_EQ(config.espeak_voice, "en-us");
  EXPECT_EQ(config.language, "en-us");
  EXPECT_FLOAT_EQ(config.noise_scale, 0.667f);
  EXPECT_FLOAT_EQ(config.noise_w, 0.8f);
  EXPECT_EQ(config.num_speakers, 1);
  EXPECT_EQ(config.phoneme_id_map.at(U'ə'), std::vector<int64_t>{59});
}

TEST(PiperVoiceConfigTest, ReadsSpeakers) {
  auto config = PiperVoiceConfig::Load(testing::ModelPath("models/en_US-multi-medium.onnx.json"));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->num_speakers, 3);
  EXPECT_EQ(config->speaker_id_map.at("bob"), 1);
}

TEST(PiperVoiceConfigTest, ErrorsNameTheFileAndTheKey) {
  auto not_json = PiperVoiceConfig::Parse("{", "/v/x.onnx.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.status().message().find("/v/x.onnx.json"), std::string::npos);
  auto no_map = PiperVoiceConfig::Parse(R"({"audio": {"sample_rate": 22050}})", "v.json");
  ASSERT_FALSE(no_map.ok());
  EXPECT_NE(no_map.status().message().find("phoneme_id_map"), std::string::npos);
  auto no_pad = PiperVoiceConfig::Parse(R"({"phoneme_id_map": {"^": [1], "$": [2]}})", "v.json");
  ASSERT_FALSE(no_pad.ok());
  EXPECT_NE(no_pad.status().message().find("'_'"), std::string::npos);
  auto pinyin = PiperVoiceConfig::Parse(
      R"({"phoneme_type": "pinyin", "phoneme_id_map": {"_": [0], "^": [1], "$": [2]}})", "v");
  ASSERT_FALSE(pinyin.ok());
  EXPECT_NE(pinyin.status().message().find("pinyin"), std::string::npos);
}

TEST(PiperVoiceConfigTest, NumbersOutsideTheirTypeAreRefusedNotConverted) {
  // Found by the fuzzer: converting 2.2e13 to the int sample rate is undefined behaviour.
  constexpr const char* kMap = R"("phoneme_id_map": {"_": [0], "^": [1], "$": [2]})";
  for (const std::string field :
       {R"("audio": {"sample_rate": 22050222222222.22})", R"("num_speakers": -1e12)",
        R"("hop_length": 1e300)", R"("inference": {"noise_scale": 1e300})"}) {
    auto config = PiperVoiceConfig::Parse("{" + field + ", " + kMap + "}", "v.json");
    ASSERT_FALSE(config.ok()) << field;
    EXPECT_NE(config.status().message().find("out of range"), std::string::npos) << field;
  }
  auto whole = PiperVoiceConfig::Parse(
      std::string(R"({"audio": {"sample_rate": 22050.0}, )") + kMap + "}", "v.json");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->sample_rate, 22050);
}

}  // namespace
}  // namespace voxserve::engine::onnx
