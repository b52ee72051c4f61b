#include "transport/elevenlabs/input_messages.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/strings/escaping.h"
#include "core/error.h"
#include "nlohmann/json.hpp"
#include "transport/elevenlabs/input_stream.h"

namespace voxserve::transport::elevenlabs {
namespace {

using nlohmann::json;

TEST(ParseInputMessageTest, ReadsTheFirstMessageAsLiveKitSendsIt) {
  auto message = ParseInputMessage(
      R"({"text": " ", "voice_settings": {"stability": 0.5, "speed": 1.2},
          "generation_config": {"chunk_length_schedule": [120, 160]}, "context_id": "ctx",
          "xi_api_key": "sk-1"})");
  ASSERT_TRUE(message.ok()) << message.status();
  EXPECT_EQ(message->text, " ");
  EXPECT_EQ(message->speed, 1.2);
  EXPECT_EQ(message->context_id, "ctx");
  EXPECT_EQ(message->api_key, "sk-1");
  EXPECT_FALSE(message->flush);
}

TEST(ParseInputMessageTest, ReadsTheSdkSpellingOfTheKeyAndTheFlags) {
  auto message = ParseInputMessage(
      R"({"xi-api-key": "sk-2", "flush": true, "close_context": true, "close_socket": false,
          "try_trigger_generation": true})");
  ASSERT_TRUE(message.ok()) << message.status();
  EXPECT_EQ(message->api_key, "sk-2");
  EXPECT_FALSE(message->text.has_value());
  EXPECT_TRUE(message->flush);
  EXPECT_TRUE(message->close_context);
  EXPECT_FALSE(message->close_socket);
}

TEST(ParseInputMessageTest, NamesTheFieldOfAWrongType) {
  for (const char* bad : {R"({"text": 5})", R"({"flush": "yes"})", R"({"context_id": 1})",
                          R"({"voice_settings": {"speed": "fast"}})", R"({"xi_api_key": 3})"}) {
    auto message = ParseInputMessage(bad);
    ASSERT_FALSE(message.ok()) << bad;
    EXPECT_EQ(core::DetailOf(message.status()).code, "invalid_type") << bad;
  }
  for (const char* bad : {"not json", "[1]", "\"text\""}) {
    EXPECT_EQ(core::DetailOf(ParseInputMessage(bad).status()).code, "invalid_json") << bad;
  }
}

TEST(AudioMessageTest, CarriesAudioAndMillisecondAlignmentThatTilesTheChunk) {
  service::CharacterAlignment alignment = service::EstimateAlignment("abc", 1.0, 0.1);
  json message = json::parse(AudioMessage("\x01\x02", alignment, std::string("ctx")));
  std::string audio;
  ASSERT_TRUE(absl::Base64Unescape(message["audio"].get<std::string>(), &audio));
  EXPECT_EQ(audio, "\x01\x02");
  EXPECT_EQ(message["isFinal"], false);
  EXPECT_EQ(message["contextId"], "ctx");
  const json& aligned = message["alignment"];
  EXPECT_EQ(aligned, message["normalizedAlignment"]);
  EXPECT_EQ(aligned["chars"], json({"a", "b", "c"}));
  // 1000 ms, then thirds of 100 ms, rounded so that each starts where the last ended.
  EXPECT_EQ(aligned["charStartTimesMs"], json({1000, 1033, 1067}));
  EXPECT_EQ(aligned["charDurationsMs"], json({33, 34, 33}));
}

TEST(FinalAndErrorMessageTest, HaveContextIdOnlyOnMultiStream) {
  EXPECT_EQ(json::parse(FinalMessage({})), json({{"isFinal", true}}));
  EXPECT_EQ(json::parse(FinalMessage(std::string("a"))),
            json({{"isFinal", true}, {"contextId", "a"}}));
  json error =
      json::parse(ErrorMessage(core::Unauthenticated("no key", "missing_api_key"), 1008, {}));
  EXPECT_EQ(error["error"], "invalid_api_key");  // ElevenLabs' one code, as over REST
  EXPECT_EQ(error["code"], 1008);
  EXPECT_FALSE(error.contains("contextId"));
}

TEST(ServesInputStreamTest, TakesBothRoutesWithAVoiceIdOnly) {
  EXPECT_TRUE(ServesInputStream("/elevenlabs/v1/text-to-speech/en-us/stream-input"));
  EXPECT_TRUE(ServesInputStream("/elevenlabs/v1/text-to-speech/en-us/multi-stream-input"));
  EXPECT_FALSE(ServesInputStream("/elevenlabs/v1/text-to-speech//stream-input"));
  EXPECT_FALSE(ServesInputStream("/elevenlabs/v1/text-to-speech/a/b/stream-input"));
  EXPECT_FALSE(ServesInputStream("/elevenlabs/v1/text-to-speech/en-us/stream"));
  EXPECT_FALSE(ServesInputStream("/v1/audio/speech/stream"));
}

}  // namespace
}  // namespace voxserve::transport::elevenlabs
