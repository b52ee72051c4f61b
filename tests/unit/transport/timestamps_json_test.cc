// "timestamps" in speech requests, and the JSON entries the REST and WebSocket APIs send.
#include "transport/http/timestamps_json.h"

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/http/speech_request_parser.h"

namespace voxserve::transport::http {
namespace {

HttpRequest PostJson(std::string body) {
  HttpRequest request;
  request.method = "POST";
  request.path = "/v1/audio/speech";
  request.headers = {{"content-type", "application/json"}};
  request.body = std::move(body);
  return request;
}

TEST(TimestampsRequestTest, OpenAiRouteReadsWordAndChar) {
  auto word = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "timestamps": "word"})"));
  ASSERT_TRUE(word.ok()) << word.status();
  EXPECT_EQ(word->timestamps, TimestampsMode::kWord);
  auto chars = ParseOpenAiSpeechRequest(PostJson(
      R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "timestamps": "char",
          "stream_format": "sse"})"));
  ASSERT_TRUE(chars.ok()) << chars.status();
  EXPECT_EQ(chars->timestamps, TimestampsMode::kChar);
  EXPECT_EQ(chars->stream, StreamMode::kSse);
}

TEST(TimestampsRequestTest, UnknownValueOrARawAudioStreamIsRefusedNamingTheField) {
  auto bad = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "timestamps": 3})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(core::DetailOf(bad.status()).param, "timestamps");
  auto raw = ParseOpenAiSpeechRequest(PostJson(
      R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "timestamps": "word",
          "stream_format": "audio"})"));
  ASSERT_FALSE(raw.ok());
  EXPECT_THAT(std::string(raw.status().message()), ::testing::HasSubstr("sse"));
}

TEST(TimestampsRequestTest, SynthesizeRouteStreamsSseWhenTimestampsAreAsked) {
  auto parsed =
      ParseSynthesizeRequest(PostJson(R"({"text": "Hi.", "stream": true, "timestamps": true})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->stream, StreamMode::kSse);
  auto plain = ParseSynthesizeRequest(PostJson(R"({"text": "Hi.", "stream": true})"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->stream, StreamMode::kAudio);
}

TEST(TimestampEntriesTest, WordsAndCharactersInKokoroFastApisShape) {
  service::SegmentTimings segment{1,   "Hi yo", audio::TimingsKind::kExact,
                                  1.0, 2.0,     {{0, 2, 1.0, 1.4}, {3, 5, 1.5, 1.9}}};
  nlohmann::json words = TimestampEntries(segment, TimestampsMode::kWord);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[1]["word"], "yo");
  EXPECT_DOUBLE_EQ(words[1]["start_time"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(words[1]["end_time"].get<double>(), 1.9);
  nlohmann::json chars = TimestampEntries(segment, TimestampsMode::kChar);
  ASSERT_EQ(chars.size(), 5u);
  EXPECT_EQ(chars[2]["char"], " ");
  EXPECT_DOUBLE_EQ(chars[2]["start_time"].get<double>(), 1.4);
  EXPECT_DOUBLE_EQ(chars[2]["end_time"].get<double>(), 1.5);
}

TEST(TimestampEntriesTest, TheCombinedKindIsTheLeastExact) {
  std::vector<service::SegmentTimings> segments(2);
  segments[0].kind = audio::TimingsKind::kExact;
  segments[1].kind = audio::TimingsKind::kEstimated;
  EXPECT_EQ(CombinedTimingsKind(segments), "estimated");
  segments[1].kind = audio::TimingsKind::kExact;
  EXPECT_EQ(CombinedTimingsKind(segments), "exact");
}

}  // namespace
}  // namespace voxserve::transport::http
