// The client's side of the WebSocket speech stream: the messages it sends, the events it reads,
// and how close codes and error events become the same Outcome (hence Status and retries) as
// REST's answers.
#include "client/ws_protocol.h"

#include <gtest/gtest.h>

#include "client/backoff.h"
#include "nlohmann/json.hpp"

namespace voxserve::client {
namespace {

using nlohmann::json;

TEST(WsMessagesTest, ConfigCarriesTheRequestFieldsAndNoText) {
  SpeechRequest request;
  request.voice = "cmn";
  request.model = "espeak";
  request.response_format = "wav";
  request.speed = 1.5;
  json config = json::parse(WsConfigMessage(request));
  EXPECT_EQ(config["voice"], "cmn");
  EXPECT_EQ(config["model"], "espeak");
  EXPECT_EQ(config["response_format"], "wav");
  EXPECT_EQ(config["speed"], 1.5);
  EXPECT_FALSE(config.contains("instructions"));
  EXPECT_FALSE(config.contains("text"));  // the server refuses a config with text in it
  request.instructions = "calm";
  EXPECT_EQ(json::parse(WsConfigMessage(request))["instructions"], "calm");
}

TEST(WsMessagesTest, ShortInputIsOneMessageThatCloses) {
  std::vector<std::string> messages = WsTextMessages("Hello there. Bye.", 8192);
  ASSERT_EQ(messages.size(), 1u);
  json message = json::parse(messages[0]);
  EXPECT_EQ(message["text"], "Hello there. Bye.");
  EXPECT_EQ(message["close"], true);
}

TEST(WsMessagesTest, LongInputIsCutAtCharacterBoundariesAndOnlyTheLastCloses) {
  std::string input;
  for (int i = 0; i < 50; ++i) input += "你好，世界。abc ";  // 3-byte characters among ASCII
  std::vector<std::string> messages = WsTextMessages(input, 16);
  ASSERT_GT(messages.size(), 10u);
  std::string joined;
  for (size_t i = 0; i < messages.size(); ++i) {
    json message = json::parse(messages[i]);  // throws on a cut inside a character
    std::string piece = message["text"];
    EXPECT_LE(piece.size(), 16u);
    EXPECT_FALSE(piece.empty());
    EXPECT_EQ(message.contains("close"), i + 1 == messages.size()) << i;
    joined += piece;
  }
  EXPECT_EQ(joined, input);
}

TEST(WsEventsTest, ReadsReadySegmentDoneAndDone) {
  auto ready = ParseWsEvent(R"({"type":"ready","request_id":"abc","response_format":"pcm"})");
  ASSERT_TRUE(ready.has_value());
  EXPECT_EQ(ready->type, WsEvent::Type::kReady);
  EXPECT_EQ(ready->request_id, "abc");
  EXPECT_EQ(ready->response_format, "pcm");

  auto segment = ParseWsEvent(
      R"({"type":"segment_done","index":0,"text":"Hi.","audio_bytes":9600,"sample_rate":22050})");
  ASSERT_TRUE(segment.has_value());
  EXPECT_EQ(segment->type, WsEvent::Type::kSegmentDone);
  EXPECT_EQ(segment->sample_rate, 22050);

  auto done = ParseWsEvent(
      R"({"type":"done","model":"espeak","usage":{"input_characters":3,"audio_seconds":0.75,"segments":1}})");
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->type, WsEvent::Type::kDone);
  EXPECT_EQ(done->audio_seconds, 0.75);

  EXPECT_EQ(ParseWsEvent(R"({"type":"progress"})")->type, WsEvent::Type::kOther);
  for (const char* bad : {"", "not json", "[1]", R"({"type":3})", R"({"no":"type"})"}) {
    EXPECT_FALSE(ParseWsEvent(bad).has_value()) << bad;
  }
}

TEST(WsEventsTest, AnErrorEventIsTheHttpAnswerRestWouldGive) {
  auto event = ParseWsEvent(
      R"({"type":"error","status":404,"error":{"message":"unknown voice 'x'","type":"invalid_request_error","param":"voice","code":"voice_not_found"}})");
  ASSERT_TRUE(event.has_value());
  ASSERT_EQ(event->type, WsEvent::Type::kError);
  const Outcome& error = event->error;
  EXPECT_EQ(error.kind, ErrorKind::kHttp);
  EXPECT_EQ(error.http_status, 404);
  EXPECT_EQ(error.param, "voice");
  EXPECT_EQ(error.code, "voice_not_found");
  EXPECT_EQ(error.type, "invalid_request_error");
  EXPECT_NE(error.message.find("unknown voice 'x'"), std::string::npos);
  EXPECT_EQ(StatusCodeForHttp(error.http_status), absl::StatusCode::kNotFound);

  // Queue full: 429, retried like REST's.
  auto busy = ParseWsEvent(R"({"type":"error","status":429,"error":{"message":"queue full"}})");
  EXPECT_TRUE(IsRetryable(busy->error.kind, busy->error.http_status, false));
  EXPECT_FALSE(IsRetryable(busy->error.kind, busy->error.http_status, true));  // audio seen

  // No usable status: a server error.
  EXPECT_EQ(ParseWsEvent(R"({"type":"error"})")->error.http_status, 500);
  EXPECT_EQ(ParseWsEvent(R"({"type":"error","status":200})")->error.http_status, 500);
}

TEST(WsCloseTest, CloseCodesMapToTheirHttpEquivalents) {
  struct Case {
    int code;
    ErrorKind kind;
    int http_status;
    absl::StatusCode status;
    bool retried;
  };
  for (const Case& c : {
           Case{1013, ErrorKind::kHttp, 503, absl::StatusCode::kUnavailable, true},
           Case{1001, ErrorKind::kHttp, 503, absl::StatusCode::kUnavailable, true},
           Case{1008, ErrorKind::kHttp, 400, absl::StatusCode::kInvalidArgument, false},
           Case{1009, ErrorKind::kHttp, 413, absl::StatusCode::kInvalidArgument, false},
           Case{1011, ErrorKind::kHttp, 500, absl::StatusCode::kInternal, false},
           Case{1003, ErrorKind::kProtocol, 0, absl::StatusCode::kUnknown, false},
           Case{1000, ErrorKind::kStreamBroken, 0, absl::StatusCode::kUnknown, false},
           Case{4000, ErrorKind::kStreamBroken, 0, absl::StatusCode::kUnknown, false},
       }) {
    Outcome outcome = WsCloseOutcome(c.code, "why");
    EXPECT_EQ(outcome.kind, c.kind) << c.code;
    EXPECT_EQ(outcome.http_status, c.http_status) << c.code;
    if (c.kind == ErrorKind::kHttp) {
      EXPECT_EQ(StatusCodeForHttp(outcome.http_status), c.status) << c.code;
    }
    EXPECT_EQ(IsRetryable(outcome.kind, outcome.http_status, false), c.retried) << c.code;
    EXPECT_NE(outcome.message.find(std::to_string(c.code)), std::string::npos) << outcome.message;
    EXPECT_NE(outcome.message.find("why"), std::string::npos) << outcome.message;
  }
}

TEST(WsContentTypeTest, MatchesRestContentTypes) {
  EXPECT_EQ(WsContentType("pcm"), "audio/pcm");
  EXPECT_EQ(WsContentType("mp3"), "audio/mpeg");
  EXPECT_EQ(WsContentType("wav"), "audio/wav");
  EXPECT_EQ(WsContentType("opus"), "audio/opus");
  EXPECT_EQ(WsContentType(""), "audio/pcm");
}

}  // namespace
}  // namespace voxserve::client
