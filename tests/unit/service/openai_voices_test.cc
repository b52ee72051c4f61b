// OpenAiVoicesFor (service/openai_voices.h): OpenAI's names on a model that is not espeak-ng.
#include "service/openai_voices.h"

#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace voxserve::service {
namespace {

std::vector<engine::VoiceInfo> Voices(const std::vector<std::pair<std::string, std::string>>& ids) {
  std::vector<engine::VoiceInfo> voices;
  for (const auto& [id, language] : ids) voices.push_back({id, language, 24000, ""});
  return voices;
}

TEST(OpenAiVoicesFor, KokoroNamesakesThenTheDefaultThenVoicesOfTheNamesGender) {
  // Part of Kokoro v1.0's list.
  auto mapping = OpenAiVoicesFor(Voices({{"af_heart", "en-us"},
                                         {"af_bella", "en-us"},
                                         {"af_nova", "en-us"},
                                         {"af_sky", "en-us"},
                                         {"am_adam", "en-us"},
                                         {"am_echo", "en-us"},
                                         {"am_michael", "en-us"},
                                         {"am_onyx", "en-us"},
                                         {"bm_fable", "en-gb"},
                                         {"bm_george", "en-gb"},
                                         {"ff_siwis", "fr-fr"}}),
                                 "af_heart");
  EXPECT_EQ(mapping.size(), 13u);
  EXPECT_EQ(mapping["nova"], "af_nova");
  EXPECT_EQ(mapping["echo"], "am_echo");
  EXPECT_EQ(mapping["onyx"], "am_onyx");
  EXPECT_EQ(mapping["fable"], "bm_fable");  // a namesake wins whatever its accent
  EXPECT_EQ(mapping["alloy"], "af_heart");  // the model's default
  EXPECT_EQ(mapping["ash"], "am_adam");     // male names: the male voices not yet taken
  EXPECT_EQ(mapping["ballad"], "am_michael");
  EXPECT_EQ(mapping["coral"], "af_bella");  // female names: the female ones
  EXPECT_EQ(mapping["sage"], "af_sky");
  // Past the voices of the default's language and gender, untaken ones, then reuse; never
  // another language's voice (French for "shimmer" would be wrong).
  for (const auto& [name, voice] : mapping) {
    EXPECT_NE(voice, "ff_siwis") << name;
    if (name != "fable") EXPECT_NE(voice, "bm_george") << name;
  }
}

TEST(OpenAiVoicesFor, PiperSpeakersAreSpreadInOrder) {
  auto mapping = OpenAiVoicesFor(Voices({{"en_US-multi-medium:alice", "en-us"},
                                         {"en_US-multi-medium:bob", "en-us"},
                                         {"en_US-multi-medium:carol", "en-us"}}),
                                 "en_US-multi-medium:alice");
  EXPECT_EQ(mapping["alloy"], "en_US-multi-medium:alice");
  EXPECT_EQ(mapping["ash"], "en_US-multi-medium:bob");
  EXPECT_EQ(mapping["ballad"], "en_US-multi-medium:carol");
  std::set<std::string> used;
  for (const auto& [name, voice] : mapping) used.insert(voice);
  EXPECT_EQ(used.size(), 3u);  // all three speakers, reused past the third
}

TEST(OpenAiVoicesFor, OneVoiceServesEveryNameAndNoVoicesNone) {
  auto one = OpenAiVoicesFor(Voices({{"en_US-lessac-medium", "en-us"}}), "en_US-lessac-medium");
  EXPECT_EQ(one.size(), 13u);
  for (const auto& [name, voice] : one) EXPECT_EQ(voice, "en_US-lessac-medium") << name;
  EXPECT_TRUE(OpenAiVoicesFor({}, "").empty());
}

}  // namespace
}  // namespace voxserve::service
