#include <gtest/gtest.h>

#include <string>

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "service/alignment_estimate.h"
#include "transport/elevenlabs/error_body.h"
#include "transport/elevenlabs/output_format.h"
#include "transport/elevenlabs/tts_request.h"

namespace voxserve::transport::elevenlabs {
namespace {

using nlohmann::json;

TEST(ParseOutputFormatTest, MapsElevenLabsNamesOntoCodecAndRate) {
  auto mp3 = ParseOutputFormat("mp3_44100_128");
  ASSERT_TRUE(mp3.ok());
  EXPECT_EQ(mp3->format, audio::AudioFormat::kMp3);
  EXPECT_EQ(mp3->sample_rate, 44100);
  EXPECT_EQ(mp3->bitrate_kbps, 128);
  for (int rate : {8000, 16000, 22050, 24000, 32000, 44100, 48000}) {
    auto pcm = ParseOutputFormat("pcm_" + std::to_string(rate));
    ASSERT_TRUE(pcm.ok()) << rate;
    EXPECT_EQ(pcm->format, audio::AudioFormat::kPcm);
    EXPECT_EQ(pcm->sample_rate, rate);
  }
  auto ulaw = ParseOutputFormat("ulaw_8000");
  ASSERT_TRUE(ulaw.ok());
  EXPECT_EQ(ulaw->format, audio::AudioFormat::kUlaw);
  EXPECT_EQ(ulaw->sample_rate, 8000);
  EXPECT_EQ(ContentTypeOf(*ulaw), "audio/basic");
  EXPECT_EQ(ContentTypeOf(*ParseOutputFormat("opus_48000_64")), "audio/ogg");
}

TEST(ParseOutputFormatTest, EveryOfferedFormatIsOneTheEncodersTake) {
  for (std::string name : {"mp3_22050_32", "mp3_24000_48", "mp3_44100_192", "pcm_8000", "pcm_48000",
                           "ulaw_8000", "opus_48000_32"}) {
    auto format = ParseOutputFormat(name);
    ASSERT_TRUE(format.ok()) << name;
    EXPECT_TRUE(audio::ResolveOutputSampleRate(format->format, 22050, format->sample_rate).ok())
        << name;
  }
}

TEST(ParseOutputFormatTest, RefusesOthersNamingTheSupportedOnes) {
  for (std::string name : {"", "mp3", "pcm_11025", "alaw_8000", "wav_16000", "ulaw_16000"}) {
    auto format = ParseOutputFormat(name);
    ASSERT_FALSE(format.ok()) << name;
    EXPECT_EQ(core::DetailOf(format.status()).param, "output_format");
    EXPECT_NE(format.status().message().find("pcm_16000"), std::string::npos);
  }
}

http::HttpRequest Post(std::string body, std::string query = {}) {
  http::HttpRequest request;
  request.method = "POST";
  request.path = "/elevenlabs/v1/text-to-speech/en-us";
  request.query = std::move(query);
  request.body = std::move(body);
  return request;
}

TEST(ParseTtsRequestTest, ReadsTextVoiceFormatAndSpeed) {
  auto parsed = ParseTtsRequest(Post(R"({"text": "Hi.", "model_id": "eleven_flash_v2_5", "seed": 7,
               "voice_settings": {"speed": 1.2, "stability": 0.4, "use_speaker_boost": true}})",
                                     "output_format=pcm_16000&optimize_streaming_latency=3"),
                                "en-us");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->text, "Hi.");
  EXPECT_EQ(parsed->synthesis.voice, "en-us");
  EXPECT_EQ(parsed->synthesis.model, "");  // an ElevenLabs model id: the default model
  EXPECT_EQ(parsed->synthesis.format, audio::AudioFormat::kPcm);
  EXPECT_EQ(parsed->synthesis.sample_rate, 16000);
  EXPECT_DOUBLE_EQ(parsed->synthesis.speed, 1.2);
}

TEST(ParseTtsRequestTest, DefaultsToMp3At44100AndKeepsVoxserveModelIds) {
  auto parsed = ParseTtsRequest(Post(R"({"text": "Hi.", "model_id": "espeak"})"), "v");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->synthesis.format, audio::AudioFormat::kMp3);
  EXPECT_EQ(parsed->synthesis.sample_rate, 44100);
  EXPECT_EQ(parsed->synthesis.model, "espeak");
}

TEST(ParseTtsRequestTest, ShapeErrorsBecomeFastApi422s) {
  for (std::string body : {"{}", R"({"text": 3})", "not json", "[]",
                           R"({"text": "a", "voice_settings": {"speed": "fast"}})"}) {
    auto parsed = ParseTtsRequest(Post(body), "v");
    ASSERT_FALSE(parsed.ok()) << body;
    http::HttpResponse response = ErrorResponse(parsed.status());
    EXPECT_EQ(response.status, 422) << body;
    json detail = json::parse(response.body)["detail"];
    ASSERT_TRUE(detail.is_array());
    EXPECT_EQ(detail[0]["loc"][0], "body");
  }
  auto missing = ParseTtsRequest(Post("{}"), "v");
  EXPECT_EQ(json::parse(ErrorJson(missing.status()))["detail"][0]["loc"],
            json::array({"body", "text"}));
}

TEST(ParseTtsRequestTest, ReadsTheSeedInVoxservesRangeWithV1sReasons) {
  auto seven = ParseTtsRequest(Post(R"({"text": "Hi.", "seed": 7})"), "v");
  ASSERT_TRUE(seven.ok());
  EXPECT_EQ(seven->synthesis.seed, 7u);
  auto largest = ParseTtsRequest(Post(R"({"text": "Hi.", "seed": 18446744073709551615})"), "v");
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ(largest->synthesis.seed, 18446744073709551615u);
  // Out of range either way: 400 invalid_seed as on /v1, not an ignored seed or a type error.
  for (std::string seed : {"-1", "18446744073709551616", "-1e30"}) {
    auto parsed = ParseTtsRequest(Post(R"({"text": "Hi.", "seed": )" + seed + "}"), "v");
    ASSERT_FALSE(parsed.ok()) << seed;
    EXPECT_EQ(core::DetailOf(parsed.status()).code, "invalid_seed") << seed;
    EXPECT_EQ(ErrorResponse(parsed.status()).status, 400) << seed;
    EXPECT_NE(parsed.status().message().find("18446744073709551615"), std::string::npos);
  }
  for (std::string seed : {"1.5", "\"7\"", "true"}) {
    auto parsed = ParseTtsRequest(Post(R"({"text": "Hi.", "seed": )" + seed + "}"), "v");
    ASSERT_FALSE(parsed.ok()) << seed;
    EXPECT_EQ(ErrorResponse(parsed.status()).status, 422) << seed;  // not an integer at all
  }
}

TEST(ParseTtsRequestTest, EchoesAHugeOutputFormatOrBrokenBodyBounded) {
  auto format = ParseTtsRequest(
      Post(R"({"text": "Hi."})", "output_format=" + std::string(900'000, 'x')), "v");
  ASSERT_FALSE(format.ok());
  EXPECT_LT(ErrorResponse(format.status()).body.size(), 2000u);
  auto body = ParseTtsRequest(Post(R"({"text": ")" + std::string(900'000, 'x')), "v");
  ASSERT_FALSE(body.ok());
  EXPECT_LT(ErrorResponse(body.status()).body.size(), 2000u);
}

TEST(ErrorBodyTest, AMissingKeyIsToldToSendXiApiKey) {
  http::HttpResponse missing = ErrorResponse(
      core::Unauthenticated("an API key is required: send 'Authorization: Bearer <key>'",
                            "missing_api_key"),
      "req-9");
  EXPECT_EQ(missing.status, 401);
  json detail = json::parse(missing.body)["detail"];
  EXPECT_NE(detail["message"].get<std::string>().find("xi-api-key"), std::string::npos);
  EXPECT_EQ(detail["request_id"], "req-9");
  EXPECT_EQ(detail["code"], "invalid_api_key");
}

TEST(ErrorBodyTest, EveryErrorHasACode) {
  for (const absl::Status& status :
       {absl::DeadlineExceededError("late"), absl::InternalError("boom"),
        absl::UnavailableError("loading"), core::InvalidArgument("bad")}) {
    json detail = json::parse(ErrorJson(status, "r"))["detail"];
    EXPECT_TRUE(detail["code"].is_string() && !detail["code"].get<std::string>().empty()) << status;
  }
}

TEST(ErrorBodyTest, UsesElevenLabsDetailObjectsAndCodes) {
  http::HttpResponse voice =
      ErrorResponse(core::NotFound("voice 'x' not found", "voice", "voice_not_found"), "req-1");
  EXPECT_EQ(voice.status, 400);
  json detail = json::parse(voice.body)["detail"];
  EXPECT_EQ(detail["status"], "voice_not_found");
  EXPECT_EQ(detail["code"], "voice_not_found");
  EXPECT_EQ(detail["request_id"], "req-1");
  EXPECT_EQ(detail["param"], "voice");

  http::HttpResponse key = ErrorResponse(core::Unauthenticated("bad key", "invalid_api_key"));
  EXPECT_EQ(key.status, 401);
  EXPECT_EQ(json::parse(key.body)["detail"]["status"], "invalid_api_key");
  EXPECT_EQ(json::parse(key.body)["detail"]["type"], "authentication_error");

  http::HttpResponse full = ErrorResponse(core::QueueFull("busy", 2));
  EXPECT_EQ(full.status, 429);
  bool retry_after = false;
  for (const auto& [name, value] : full.headers)
    retry_after |= name == "Retry-After" && value == "2";
  EXPECT_TRUE(retry_after);
}

TEST(EstimateAlignmentTest, SpreadsCodePointsEvenlyFromTheOffset) {
  service::CharacterAlignment alignment = service::EstimateAlignment("añb", 1.0, 3.0);
  ASSERT_EQ(alignment.characters.size(), 3u);
  EXPECT_EQ(alignment.characters[1], "ñ");
  EXPECT_DOUBLE_EQ(alignment.start_seconds[0], 1.0);
  EXPECT_DOUBLE_EQ(alignment.end_seconds[0], 2.0);
  EXPECT_DOUBLE_EQ(alignment.start_seconds[2], 3.0);
  EXPECT_DOUBLE_EQ(alignment.end_seconds[2], 4.0);
}

TEST(EstimateAlignmentTest, EmptyTextAndBrokenUtf8AreHandled) {
  EXPECT_TRUE(service::EstimateAlignment("", 0, 1).characters.empty());
  service::CharacterAlignment broken = service::EstimateAlignment("a\xE2", 0, 1);
  ASSERT_EQ(broken.characters.size(), 2u);
  EXPECT_EQ(broken.characters[1], "\xE2");
}

}  // namespace
}  // namespace voxserve::transport::elevenlabs
