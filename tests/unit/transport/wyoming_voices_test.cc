#include "transport/wyoming/wyoming_voices.h"

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace voxserve::transport::wyoming {
namespace {

using nlohmann::json;
using service::VoiceListing;

VoiceListing Voice(std::string id, std::string model, std::string engine, std::string language) {
  VoiceListing listing;
  listing.id = std::move(id);
  listing.model = std::move(model);
  listing.engine = std::move(engine);
  listing.language = std::move(language);
  listing.description = listing.id + " voice";
  return listing;
}

// What ListVoices gives for espeak beside a multi-speaker and a single-speaker Piper file, an
// alias and a cloned voice.
std::vector<VoiceListing> Listings() {
  std::vector<VoiceListing> listings = {
      Voice("en-us", "espeak", "espeak", "en-us"),
      Voice("de", "espeak", "espeak", "de"),
      Voice("en_US-multi-medium:alice", "en_US-multi-medium", "piper", "en-us"),
      Voice("en_US-multi-medium:bob", "en_US-multi-medium", "piper", "en-us"),
      Voice("de_DE-test-medium", "de_DE-test-medium", "piper", "de-de"),
      Voice("en-us", "other-espeak", "espeak", "en-us"),
  };
  VoiceListing alias = Voice("alloy", "espeak", "espeak", "en-us");
  alias.alias_of = "en-us+f3";
  listings.push_back(alias);
  VoiceListing cloned = Voice("voice_0123", "cosyvoice2", "cosyvoice", "zh");
  cloned.cloned = true;
  cloned.description = "cloned voice 'Prompt Voice'";
  listings.push_back(cloned);
  return listings;
}

const WyomingVoice* Named(const std::vector<WyomingVoice>& voices, const std::string& name) {
  for (const WyomingVoice& voice : voices) {
    if (voice.name == name) return &voice;
  }
  return nullptr;
}

TEST(WyomingVoicesTest, EveryVoiceOnceWithUniqueNamesAndPiperSpeakersGrouped) {
  std::vector<WyomingVoice> voices = WyomingVoices(Listings());
  std::vector<std::string> names;
  for (const WyomingVoice& voice : voices) names.push_back(voice.name);
  EXPECT_THAT(
      names, ::testing::ElementsAre("espeak/en-us", "de", "en_US-multi-medium", "de_DE-test-medium",
                                    "other-espeak/en-us", "voice_0123"));
  const WyomingVoice* multi = Named(voices, "en_US-multi-medium");
  ASSERT_NE(multi, nullptr);
  EXPECT_THAT(multi->speakers, ::testing::ElementsAre("alice", "bob"));
  EXPECT_EQ(multi->voice, "") << "no speaker: the model's default voice";
  EXPECT_EQ(Named(voices, "other-espeak/en-us")->model, "other-espeak");
}

TEST(WyomingVoicesTest, InfoHasOneStreamingTtsProgramWithEachVoicesFields) {
  json info = InfoData(WyomingVoices(Listings()), "1.2.3");
  ASSERT_EQ(info["tts"].size(), 1u);
  const json& program = info["tts"][0];
  EXPECT_EQ(program["name"], "voxserve");
  EXPECT_EQ(program["version"], "1.2.3");
  EXPECT_EQ(program["installed"], true);
  EXPECT_EQ(program["supports_synthesize_streaming"], true);
  for (const char* empty : {"asr", "handle", "intent", "wake", "mic", "snd"}) {
    EXPECT_TRUE(info[empty].is_array() && info[empty].empty()) << empty;
  }
  const json& voices = program["voices"];
  ASSERT_EQ(voices.size(), 6u);
  const json& espeak = voices[0];
  EXPECT_EQ(espeak["languages"], json::array({"en_US"}));
  EXPECT_EQ(espeak["attribution"]["name"], "eSpeak NG");
  EXPECT_EQ(espeak["installed"], true);
  EXPECT_TRUE(espeak.contains("version") && espeak.contains("description"));
  EXPECT_FALSE(espeak.contains("speakers"));
  EXPECT_EQ(voices[2]["speakers"], json::array({{{"name", "alice"}}, {{"name", "bob"}}}));
  EXPECT_EQ(voices[3]["languages"], json::array({"de_DE"}));
  EXPECT_EQ(voices[5]["description"], "cloned voice 'Prompt Voice'");
  EXPECT_EQ(voices[5]["attribution"]["name"], "CosyVoice");
}

TEST(WyomingVoicesTest, LanguagesAreWrittenAsPiperDoes) {
  EXPECT_EQ(WyomingLanguage("en-us"), "en_US");
  EXPECT_EQ(WyomingLanguage("de_de"), "de_DE");
  EXPECT_EQ(WyomingLanguage("cmn"), "cmn");
  EXPECT_EQ(WyomingLanguage("en-gb-x-rp"), "en-gb-x-rp");
  EXPECT_EQ(WyomingLanguage("es-419"), "es-419");
}

absl::StatusOr<VoiceChoice> Choose(VoiceRequest request) {
  return ChooseVoice(WyomingVoices(Listings()), request);
}

TEST(WyomingVoicesTest, ANameIsAListedVoiceOrHandedOnAsItIs) {
  auto listed = Choose({.name = "other-espeak/en-us"});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->model, "other-espeak");
  EXPECT_EQ(listed->voice, "en-us");
  auto speaker = Choose({.name = "en_US-multi-medium", .speaker = "bob"});
  ASSERT_TRUE(speaker.ok());
  EXPECT_EQ(speaker->model, "en_US-multi-medium");
  EXPECT_EQ(speaker->voice, "en_US-multi-medium:bob");
  auto alias = Choose({.name = "alloy"});  // not listed: the service resolves it
  ASSERT_TRUE(alias.ok());
  EXPECT_EQ(alias->model, "");
  EXPECT_EQ(alias->voice, "alloy");
  auto unknown_speaker = Choose({.name = "en_US-multi-medium", .speaker = "dave"});
  ASSERT_FALSE(unknown_speaker.ok());
  EXPECT_EQ(core::DetailOf(unknown_speaker.status()).code, "speaker_not_found");
  EXPECT_FALSE(Choose({.name = "de", .speaker = "bob"}).ok());
}

TEST(WyomingVoicesTest, ALanguagePicksTheFirstVoiceThatSpeaksIt) {
  auto exact = Choose({.language = "de_DE"});
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->model, "de_DE-test-medium") << "the same tag before a wider one";
  auto narrower = Choose({.language = "en"});
  ASSERT_TRUE(narrower.ok());
  EXPECT_EQ(narrower->model, "espeak");
  EXPECT_EQ(narrower->voice, "en-us");
  auto primary = Choose({.language = "de-AT"});
  ASSERT_TRUE(primary.ok());
  EXPECT_EQ(primary->voice, "de") << "the same primary language at last";
  auto zh = Choose({.language = "zh"});
  ASSERT_TRUE(zh.ok());
  EXPECT_EQ(zh->voice, "voice_0123");
  auto none = Choose({.language = "fi"});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(core::DetailOf(none.status()).code, "voice_not_found");
  auto fallback = Choose({});
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(fallback->model, "");
  EXPECT_EQ(fallback->voice, "");
}

}  // namespace
}  // namespace voxserve::transport::wyoming
