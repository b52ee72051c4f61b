#include "transport/websocket/websocket_messages.h"

#include "core/error.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::websocket {
namespace {

using nlohmann::json;

std::string CodeOf(const absl::Status& status) { return core::DetailOf(status).code; }
std::string ParamOf(const absl::Status& status) { return core::DetailOf(status).param; }

TEST(WebSocketConfigMessage, EveryFieldIsOptionalAndTheFormatDefaultsToPcm) {
  absl::StatusOr<StreamConfig> config = ParseConfigMessage("{}");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->format, audio::AudioFormat::kPcm);
  EXPECT_EQ(config->speed, 1.0);
  EXPECT_TRUE(config->model.empty());
  EXPECT_TRUE(config->voice.empty());
  EXPECT_FALSE(config->timeout.has_value());
}

TEST(WebSocketConfigMessage, ReadsEveryField) {
  absl::StatusOr<StreamConfig> config = ParseConfigMessage(
      R"({"model":"tts-1","voice":{"id":"en-gb"},"response_format":"wav","speed":1.5,)"
      R"("instructions":"calm","timeout_ms":2500})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->model, "tts-1");
  EXPECT_EQ(config->voice, "en-gb");
  EXPECT_EQ(config->format, audio::AudioFormat::kWav);
  EXPECT_EQ(config->speed, 1.5);
  EXPECT_EQ(config->instructions, "calm");
  EXPECT_EQ(config->timeout, std::chrono::milliseconds(2500));
}

TEST(WebSocketConfigMessage, ReadsVoiceModeAndSeed) {
  absl::StatusOr<StreamConfig> config =
      ParseConfigMessage(R"({"voice":"v","voice_mode":"instruct","seed":42})");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->voice_mode, "instruct");
  EXPECT_EQ(config->seed, 42u);
  for (const char* message : {R"({"seed":-1})", R"({"seed":2.5})"}) {
    EXPECT_EQ(ParamOf(ParseConfigMessage(message).status()), "seed") << message;
  }
  EXPECT_EQ(CodeOf(ParseConfigMessage(R"({"seed":-1})").status()), "invalid_seed");
  EXPECT_EQ(CodeOf(ParseConfigMessage(R"({"seed":18446744073709551616})").status()),
            "invalid_seed");
  EXPECT_EQ(ParamOf(ParseConfigMessage(R"({"voice_mode":[]})").status()), "voice_mode");
  // A second config of only these fields is still a repeated config.
  EXPECT_EQ(CodeOf(ParseClientMessage(R"({"seed":1})").status()), "repeated_config");
  EXPECT_EQ(CodeOf(ParseClientMessage(R"({"voice_mode":"instruct"})").status()), "repeated_config");
}

TEST(WebSocketConfigMessage, AnInlinePromptIsRefusedNotIgnored) {
  for (const char* message :
       {R"({"voice":"v","ref_audio":"UklGRg=="})", R"({"voice":"v","ref_text":"Hi."})"}) {
    absl::Status status = ParseConfigMessage(message).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_EQ(ParamOf(status), "ref_audio") << message;
    EXPECT_EQ(CodeOf(status), "ref_audio_not_supported") << message;
  }
}

TEST(WebSocketConfigMessage, BadJsonIsInvalidJson) {
  for (const char* text : {"{voice: en}", "[]", "\"voice\"", ""}) {
    absl::StatusOr<StreamConfig> config = ParseConfigMessage(text);
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(CodeOf(config.status()), "invalid_json") << text;
  }
}

TEST(WebSocketConfigMessage, WrongTypesNameTheField) {
  struct Case {
    const char* message;
    const char* param;
    const char* code;
  };
  for (const Case& c : {Case{R"({"voice":3})", "voice", "invalid_type"},
                        Case{R"({"speed":"fast"})", "speed", "invalid_type"},
                        Case{R"({"timeout_ms":1.5})", "timeout_ms", "invalid_type"},
                        Case{R"({"response_format":"ogg"})", "response_format", ""}}) {
    absl::StatusOr<StreamConfig> config = ParseConfigMessage(c.message);
    ASSERT_FALSE(config.ok()) << c.message;
    EXPECT_EQ(ParamOf(config.status()), c.param) << c.message;
    if (*c.code != '\0') {
      EXPECT_EQ(CodeOf(config.status()), c.code) << c.message;
    }
  }
}

TEST(WebSocketConfigMessage, TextBeforeTheConfigIsMissingConfig) {
  absl::StatusOr<StreamConfig> config = ParseConfigMessage(R"({"text":"Hello."})");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(CodeOf(config.status()), "missing_config");
}

// Ranges are the service's to check, once for every transport (service::CheckRequestOptions;
// tests/unit/service/speech_session_test.cc): the parser passes the values on as they are.
TEST(WebSocketConfigMessage, OutOfRangeValuesAreLeftToTheService) {
  absl::StatusOr<StreamConfig> config = ParseConfigMessage(
      json{{"speed", 9}, {"timeout_ms", 0}, {"instructions", std::string(4097, 'a')}}.dump());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->speed, 9);
  EXPECT_EQ(config->timeout, std::chrono::milliseconds(0));
  EXPECT_EQ(config->instructions.size(), 4097u);
}

TEST(WebSocketClientMessage, TextFlushAndCloseMayComeTogether) {
  absl::StatusOr<ClientMessage> message =
      ParseClientMessage(R"({"text":"Bye.","flush":true,"close":true})");
  ASSERT_TRUE(message.ok()) << message.status();
  EXPECT_EQ(message->text, "Bye.");
  EXPECT_TRUE(message->flush);
  EXPECT_TRUE(message->close);

  message = ParseClientMessage(R"({"text":"Hel"})");
  ASSERT_TRUE(message.ok());
  EXPECT_EQ(message->text, "Hel");
  EXPECT_FALSE(message->flush);
  EXPECT_FALSE(message->close);
}

TEST(WebSocketClientMessage, AnEmptyOrUnknownMessageIsRefused) {
  for (const char* text : {"{}", R"({"txt":"typo"})"}) {
    absl::StatusOr<ClientMessage> message = ParseClientMessage(text);
    ASSERT_FALSE(message.ok()) << text;
    EXPECT_EQ(CodeOf(message.status()), "empty_message") << text;
  }
}

TEST(WebSocketClientMessage, ASecondConfigIsRefused) {
  absl::StatusOr<ClientMessage> message = ParseClientMessage(R"({"voice":"en-us"})");
  ASSERT_FALSE(message.ok());
  EXPECT_EQ(CodeOf(message.status()), "repeated_config");
}

// Any config field marks a repeated config, not only "voice" (it used to be empty_message).
TEST(WebSocketClientMessage, ASecondConfigWithoutVoiceIsRefusedAsRepeated) {
  for (const char* text : {R"({"speed":1.5})", R"({"response_format":"wav"})",
                           R"({"instructions":"calm"})", R"({"timeout_ms":500})"}) {
    absl::StatusOr<ClientMessage> message = ParseClientMessage(text);
    ASSERT_FALSE(message.ok()) << text;
    EXPECT_EQ(CodeOf(message.status()), "repeated_config") << text;
  }
}

TEST(WebSocketClientMessage, WrongTypesNameTheField) {
  for (auto [text, param] : {std::pair{R"({"text":5})", "text"},
                             {R"({"flush":"yes"})", "flush"},
                             {R"({"close":1})", "close"}}) {
    absl::StatusOr<ClientMessage> message = ParseClientMessage(text);
    ASSERT_FALSE(message.ok()) << text;
    EXPECT_EQ(ParamOf(message.status()), param) << text;
    EXPECT_EQ(CodeOf(message.status()), "invalid_type") << text;
  }
}

TEST(WebSocketCloseCode, FollowsTheKindOfError) {
  EXPECT_EQ(CloseCodeFor(absl::OkStatus()), CloseCode::kNormal);
  EXPECT_EQ(CloseCodeFor(core::Draining("bye")), CloseCode::kGoingAway);
  EXPECT_EQ(CloseCodeFor(core::QueueFull("busy", 1)), CloseCode::kTryAgainLater);
  EXPECT_EQ(CloseCodeFor(absl::UnavailableError("loading")), CloseCode::kTryAgainLater);
  EXPECT_EQ(CloseCodeFor(core::PayloadTooLarge("long", "text")), CloseCode::kTooBig);
  // Audio over its bound is no message too big: the stream broke a policy (1008).
  EXPECT_EQ(CloseCodeFor(core::OutputTooLong("long")), CloseCode::kPolicy);
  EXPECT_EQ(CloseCodeFor(core::InvalidArgument("bad")), CloseCode::kPolicy);
  EXPECT_EQ(CloseCodeFor(core::NotFound("no voice", "voice", "voice_not_found")),
            CloseCode::kPolicy);
  EXPECT_EQ(CloseCodeFor(core::PermissionDenied("no", "model", "model_not_allowed")),
            CloseCode::kPolicy);
  EXPECT_EQ(CloseCodeFor(core::Internal("bug")), CloseCode::kServerError);
  EXPECT_EQ(CloseCodeFor(absl::DeadlineExceededError("late")), CloseCode::kServerError);
}

TEST(WebSocketEvents, ErrorCarriesTheHttpErrorBodyAndStatus) {
  json event = json::parse(ErrorEvent(core::NotFound("unknown voice 'xx'", "voice",
                                                     "voice_not_found")));
  EXPECT_EQ(event["type"], "error");
  EXPECT_EQ(event["status"], 404);
  EXPECT_EQ(event["error"]["message"], "unknown voice 'xx'");
  EXPECT_EQ(event["error"]["param"], "voice");
  EXPECT_EQ(event["error"]["code"], "voice_not_found");
  EXPECT_EQ(event["error"]["type"], "invalid_request_error");
}

TEST(WebSocketEvents, SegmentDoneAndDoneCarryUsageAndTimings) {
  service::SynthesisSummary summary;
  summary.model = "espeak";
  summary.voice = "en-us";
  summary.input_chars = 12;
  summary.segments = 1;
  summary.audio_seconds = 0.75;
  summary.queue_wait_seconds = 0.001;
  summary.time_to_first_audio_seconds = 0.02;
  summary.total_seconds = 0.03;
  json segment = json::parse(SegmentDoneEvent({2, "Hello there.", 36000, 24000, summary}));
  EXPECT_EQ(segment["type"], "segment_done");
  EXPECT_EQ(segment["index"], 2);
  EXPECT_EQ(segment["text"], "Hello there.");
  EXPECT_EQ(segment["audio_bytes"], 36000);
  EXPECT_EQ(segment["sample_rate"], 24000);
  EXPECT_EQ(segment["usage"]["input_characters"], 12);
  EXPECT_EQ(segment["usage"]["audio_seconds"], 0.75);
  EXPECT_EQ(segment["timings"]["time_to_first_audio_seconds"], 0.02);
  json done = json::parse(DoneEvent(summary));
  EXPECT_EQ(done["type"], "done");
  EXPECT_EQ(done["model"], "espeak");
  EXPECT_EQ(done["usage"]["segments"], 1);
  EXPECT_EQ(done["timings"]["total_seconds"], 0.03);
}

TEST(WebSocketEvents, TypeComesFirst) {
  EXPECT_EQ(ReadyEvent("abc", audio::AudioFormat::kPcm).rfind(R"({"type":"ready")", 0), 0u);
  EXPECT_EQ(ErrorEvent(core::Internal("x")).rfind(R"({"type":"error")", 0), 0u);
}

}  // namespace
}  // namespace voxserve::transport::websocket
