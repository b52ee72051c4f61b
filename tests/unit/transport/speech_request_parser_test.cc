#include "transport/http/speech_request_parser.h"

#include <chrono>
#include <string>

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/http/dictionary_locators_field.h"

namespace voxserve::transport::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

HttpRequest PostJson(std::string body, std::string content_type = "application/json") {
  HttpRequest request;
  request.method = "POST";
  request.path = "/v1/audio/speech";
  request.headers = {{"content-type", std::move(content_type)}};
  request.body = std::move(body);
  return request;
}

// Asserts `result` failed with InvalidArgument naming `param` with machine code `code`.
template <typename T>
void ExpectFieldError(const absl::StatusOr<T>& result, const std::string& param,
                      const std::string& code) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  core::ErrorDetail detail = core::DetailOf(result.status());
  EXPECT_EQ(detail.param, param);
  EXPECT_EQ(detail.code, code);
}

constexpr const char* kMinimalOpenAi = R"({"model": "tts-1", "input": "Hello.", "voice": "alloy"})";

// ---- /v1/audio/speech ----

// An empty version_id is refused: it would silently mean the newest version (issue 39). Left
// out or null, it does mean the newest.
TEST(ParseDictionaryLocators, AnEmptyVersionIdIsRefusedAndAMissingOrNullOneIsTheNewest) {
  auto empty = ParseDictionaryLocators(
      nlohmann::json::parse(R"([{"pronunciation_dictionary_id": "d1", "version_id": ""}])"));
  ASSERT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(empty.status().message()), ::testing::HasSubstr("version_id is empty"));
  for (const char* newest : {R"([{"pronunciation_dictionary_id": "d1"}])",
                             R"([{"pronunciation_dictionary_id": "d1", "version_id": null}])"}) {
    auto parsed = ParseDictionaryLocators(nlohmann::json::parse(newest));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->at(0).version_id, "");
  }
  auto named = ParseDictionaryLocators(
      nlohmann::json::parse(R"([{"pronunciation_dictionary_id": "d1", "version_id": "v2"}])"));
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_EQ(named->at(0).version_id, "v2");
}

TEST(ParseOpenAiSpeechRequest, MinimalBodyGetsOpenAiDefaults) {
  auto parsed = ParseOpenAiSpeechRequest(PostJson(kMinimalOpenAi));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const service::SynthesisRequest& synthesis = parsed->synthesis;
  EXPECT_EQ(synthesis.model, "tts-1");
  EXPECT_EQ(synthesis.text, "Hello.");
  EXPECT_EQ(synthesis.voice, "alloy");
  EXPECT_EQ(synthesis.text_field, "input");
  EXPECT_EQ(synthesis.format, audio::AudioFormat::kMp3);
  EXPECT_EQ(synthesis.speed, 1.0);
  EXPECT_EQ(synthesis.instructions, "");
  EXPECT_FALSE(synthesis.timeout.has_value());
  // OpenAI's stream_format defaults to "audio": a chunked stream, not a whole file.
  EXPECT_EQ(parsed->stream, StreamMode::kAudio);
  EXPECT_TRUE(synthesis.streaming);
}

TEST(ParseOpenAiSpeechRequest, StreamFalseAsksForTheWholeFile) {
  auto whole = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "stream": false})"));
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->stream, StreamMode::kNone);
  EXPECT_FALSE(whole->synthesis.streaming);
  auto streamed = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "stream": true})"));
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ(streamed->stream, StreamMode::kAudio);
  // Timestamps cannot ride raw audio: left to the default they keep the whole JSON answer, and
  // a stream asked for carries them as SSE (as /v1/synthesize's stream does).
  auto captioned = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "timestamps": "word"})"));
  ASSERT_TRUE(captioned.ok()) << captioned.status();
  EXPECT_EQ(captioned->stream, StreamMode::kNone);
  auto captioned_stream = ParseOpenAiSpeechRequest(PostJson(
      R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "timestamps": "word",
          "stream": true})"));
  ASSERT_TRUE(captioned_stream.ok()) << captioned_stream.status();
  EXPECT_EQ(captioned_stream->stream, StreamMode::kSse);
}

TEST(ParseOpenAiSpeechRequest, StreamFalseBesideAStreamFormatIsRefused) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(
                       R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "stream": false,
                           "stream_format": "sse"})")),
                   "stream", "invalid_stream_format");
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(
                       R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "stream": "no"})")),
                   "stream", "invalid_type");
}

TEST(ParseOpenAiSpeechRequest, FullBodySetsEveryField) {
  auto parsed = ParseOpenAiSpeechRequest(PostJson(R"({
      "model": "gpt-4o-mini-tts", "input": "Hi there.", "voice": "nova",
      "response_format": "wav", "speed": 1.5, "instructions": "Speak calmly.",
      "stream_format": "sse", "timeout_ms": 2500})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const service::SynthesisRequest& synthesis = parsed->synthesis;
  EXPECT_EQ(synthesis.model, "gpt-4o-mini-tts");
  EXPECT_EQ(synthesis.text, "Hi there.");
  EXPECT_EQ(synthesis.voice, "nova");
  EXPECT_EQ(synthesis.format, audio::AudioFormat::kWav);
  EXPECT_EQ(synthesis.speed, 1.5);
  EXPECT_EQ(synthesis.instructions, "Speak calmly.");
  EXPECT_EQ(synthesis.timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(parsed->stream, StreamMode::kSse);
  EXPECT_TRUE(synthesis.streaming);
}

TEST(ParseOpenAiSpeechRequest, AcceptsJsonWithCharsetParameter) {
  EXPECT_TRUE(
      ParseOpenAiSpeechRequest(PostJson(kMinimalOpenAi, "application/json; charset=utf-8")).ok());
}

TEST(ParseOpenAiSpeechRequest, AcceptsMediaTypeInAnyCase) {
  // RFC 9110 §8.3.1: type and subtype are case-insensitive.
  EXPECT_TRUE(ParseOpenAiSpeechRequest(PostJson(kMinimalOpenAi, "Application/JSON")).ok());
}

TEST(ParseOpenAiSpeechRequest, AcceptsCharsetParameterWithoutSpace) {
  EXPECT_TRUE(
      ParseOpenAiSpeechRequest(PostJson(kMinimalOpenAi, "application/json;charset=UTF-8")).ok());
}

TEST(ParseOpenAiSpeechRequest, RejectsJsonLookalikeMediaTypes) {
  auto parsed = ParseOpenAiSpeechRequest(PostJson(kMinimalOpenAi, "application/jsonx"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(core::DetailOf(parsed.status()).reason, core::ErrorReason::kUnsupportedMediaType);
}

TEST(ParseOpenAiSpeechRequest, RejectsTextPlainAsUnsupportedMediaType) {
  auto parsed = ParseOpenAiSpeechRequest(PostJson(kMinimalOpenAi, "text/plain"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(core::DetailOf(parsed.status()).reason, core::ErrorReason::kUnsupportedMediaType);
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("text/plain"));
}

TEST(ParseOpenAiSpeechRequest, RejectsMissingContentTypeAsUnsupportedMediaType) {
  HttpRequest request = PostJson(kMinimalOpenAi);
  request.headers.clear();
  auto parsed = ParseOpenAiSpeechRequest(request);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(core::DetailOf(parsed.status()).reason, core::ErrorReason::kUnsupportedMediaType);
}

TEST(ParseOpenAiSpeechRequest, RejectsInvalidUtf8Body) {
  auto parsed = ParseOpenAiSpeechRequest(
      PostJson("{\"model\": \"m\", \"input\": \"\xFF\", \"voice\": \"v\"}"));
  ExpectFieldError(parsed, "", "invalid_utf8");
}

TEST(ParseOpenAiSpeechRequest, RejectsInvalidJson) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(R"({"model": "tts-1",)")), "", "invalid_json");
}

TEST(ParseOpenAiSpeechRequest, InvalidJsonIsExplainedWithoutParserInternals) {
  auto parsed = ParseOpenAiSpeechRequest(PostJson(R"({"model": x})"));
  ExpectFieldError(parsed, "", "invalid_json");
  const std::string message(parsed.status().message());
  EXPECT_THAT(message, HasSubstr("line 1, column 11"));
  EXPECT_THAT(message, Not(HasSubstr("json.exception")));
}

// nlohmann reports these as out_of_range, not parse_error: they once escaped as a 500.
TEST(ParseOpenAiSpeechRequest, NumberBeyondADoubleIsInvalidJsonInAnyField) {
  for (const char* body :
       {R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "speed": 1e309})",
        R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "unknown": -1e400})",
        R"({"model": "tts-1", "input": "Hi.", "voice": "alloy", "nested": {"a": [2e308]}})"}) {
    auto parsed = ParseOpenAiSpeechRequest(PostJson(body));
    ExpectFieldError(parsed, "", "invalid_json");
    const std::string message(parsed.status().message());
    EXPECT_THAT(message, HasSubstr("number is too large")) << body;
    EXPECT_THAT(message, Not(HasSubstr("json.exception"))) << body;
  }
  ExpectFieldError(ParseSynthesizeRequest(PostJson(R"({"text": "Hi.", "speed": 1e309})")), "",
                   "invalid_json");
}

TEST(ParseOpenAiSpeechRequest, RejectsEmptyBodyAsInvalidJson) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson("")), "", "invalid_json");
}

TEST(ParseOpenAiSpeechRequest, RejectsJsonThatIsNotAnObject) {
  auto parsed = ParseOpenAiSpeechRequest(PostJson(R"(["tts-1", "Hello.", "alloy"])"));
  ExpectFieldError(parsed, "", "invalid_json");
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("object"));
}

TEST(ParseOpenAiSpeechRequest, MissingModelNamesModel) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(R"({"input": "Hi", "voice": "alloy"})")),
                   "model", "missing_field");
}

TEST(ParseOpenAiSpeechRequest, MissingInputNamesInput) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(R"({"model": "tts-1", "voice": "alloy"})")),
                   "input", "missing_field");
}

TEST(ParseOpenAiSpeechRequest, NullInputCountsAsMissing) {
  ExpectFieldError(
      ParseOpenAiSpeechRequest(PostJson(R"({"model": "tts-1", "input": null, "voice": "alloy"})")),
      "input", "missing_field");
}

TEST(ParseOpenAiSpeechRequest, MissingVoiceNamesVoice) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(R"({"model": "tts-1", "input": "Hi"})")),
                   "voice", "missing_field");
}

TEST(ParseOpenAiSpeechRequest, InputOfTheWrongTypeNamesInput) {
  ExpectFieldError(
      ParseOpenAiSpeechRequest(PostJson(R"({"model": "tts-1", "input": 42, "voice": "alloy"})")),
      "input", "invalid_type");
}

TEST(ParseOpenAiSpeechRequest, SpeedAsStringNamesSpeed) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(
                       R"({"model": "m", "input": "Hi", "voice": "alloy", "speed": "fast"})")),
                   "speed", "invalid_type");
}

TEST(ParseOpenAiSpeechRequest, IntegerSpeedIsANumber) {
  auto parsed = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "m", "input": "Hi", "voice": "alloy", "speed": 2})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->synthesis.speed, 2.0);
}

TEST(ParseOpenAiSpeechRequest, NullOptionalFieldsKeepTheirDefaults) {
  auto parsed = ParseOpenAiSpeechRequest(PostJson(
      R"({"model": "m", "input": "Hi", "voice": "alloy", "speed": null,
          "response_format": null, "stream_format": null, "timeout_ms": null})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->synthesis.speed, 1.0);
  EXPECT_EQ(parsed->synthesis.format, audio::AudioFormat::kMp3);
  EXPECT_EQ(parsed->stream, StreamMode::kAudio);
  EXPECT_FALSE(parsed->synthesis.timeout.has_value());
}

TEST(ParseOpenAiSpeechRequest, AcceptsVoiceAsObjectWithId) {
  auto parsed = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "m", "input": "Hi", "voice": {"id": "voice_custom_1"}})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->synthesis.voice, "voice_custom_1");
}

TEST(ParseOpenAiSpeechRequest, RejectsVoiceObjectWithoutStringId) {
  ExpectFieldError(ParseOpenAiSpeechRequest(
                       PostJson(R"({"model": "m", "input": "Hi", "voice": {"name": "alloy"}})")),
                   "voice", "invalid_type");
  ExpectFieldError(
      ParseOpenAiSpeechRequest(PostJson(R"({"model": "m", "input": "Hi", "voice": {"id": 3}})")),
      "voice", "invalid_type");
}

TEST(ParseOpenAiSpeechRequest, RejectsVoiceOfOtherTypes) {
  ExpectFieldError(
      ParseOpenAiSpeechRequest(PostJson(R"({"model": "m", "input": "Hi", "voice": 7})")), "voice",
      "invalid_type");
}

TEST(ParseOpenAiSpeechRequest, RejectsEmptyVoice) {
  ExpectFieldError(
      ParseOpenAiSpeechRequest(PostJson(R"({"model": "m", "input": "Hi", "voice": ""})")), "voice",
      "empty_voice");
}

TEST(ParseOpenAiSpeechRequest, ReadsEveryOpenAiResponseFormat) {
  struct Case {
    const char* name;
    audio::AudioFormat format;
  };
  for (Case c : {Case{"mp3", audio::AudioFormat::kMp3}, Case{"opus", audio::AudioFormat::kOpus},
                 Case{"aac", audio::AudioFormat::kAac}, Case{"flac", audio::AudioFormat::kFlac},
                 Case{"wav", audio::AudioFormat::kWav}, Case{"pcm", audio::AudioFormat::kPcm}}) {
    auto parsed = ParseOpenAiSpeechRequest(PostJson(
        std::string(R"({"model": "m", "input": "Hi", "voice": "alloy", "response_format": ")") +
        c.name + "\"}"));
    ASSERT_TRUE(parsed.ok()) << c.name << ": " << parsed.status();
    EXPECT_EQ(parsed->synthesis.format, c.format) << c.name;
  }
}

TEST(ParseOpenAiSpeechRequest, UnknownResponseFormatNamesResponseFormat) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(
                       R"({"model": "m", "input": "Hi", "voice": "a", "response_format": "ogg"})")),
                   "response_format", "unsupported_response_format");
}

TEST(ParseOpenAiSpeechRequest, StreamFormatAudioStreamsRawAudio) {
  auto parsed = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "m", "input": "Hi", "voice": "a", "stream_format": "audio"})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->stream, StreamMode::kAudio);
  EXPECT_TRUE(parsed->synthesis.streaming);
}

TEST(ParseOpenAiSpeechRequest, StreamFormatSseStreamsEvents) {
  auto parsed = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "m", "input": "Hi", "voice": "a", "stream_format": "sse"})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->stream, StreamMode::kSse);
  EXPECT_TRUE(parsed->synthesis.streaming);
}

TEST(ParseOpenAiSpeechRequest, UnknownStreamFormatNamesStreamFormat) {
  ExpectFieldError(
      ParseOpenAiSpeechRequest(
          PostJson(R"({"model": "m", "input": "Hi", "voice": "a", "stream_format": "chunked"})")),
      "stream_format", "invalid_stream_format");
}

TEST(ParseOpenAiSpeechRequest, AcceptsInstructionsOf4096Characters) {
  std::string instructions;
  for (int i = 0; i < 4096; ++i) instructions += "\xC3\xA9";  // é: two bytes, one character
  auto parsed = ParseOpenAiSpeechRequest(PostJson(
      R"({"model": "m", "input": "Hi", "voice": "a", "instructions": ")" + instructions + "\"}"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->synthesis.instructions, instructions);
}

TEST(ParseOpenAiSpeechRequest, LeavesTheInstructionsLimitToTheService) {
  // One place for every transport's limits: service::CheckRequestOptions (413 there).
  std::string instructions(4097, 'x');
  auto parsed = ParseOpenAiSpeechRequest(PostJson(
      R"({"model": "m", "input": "Hi", "voice": "a", "instructions": ")" + instructions + "\"}"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->synthesis.instructions, instructions);
}

TEST(ParseOpenAiSpeechRequest, ReadsVoiceModeAndSeed) {
  auto parsed = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "tts-1", "input": "Hi.", "voice": "v", "voice_mode": "cross_lingual",)"
               R"( "seed": 18446744073709551615})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->synthesis.voice_mode, "cross_lingual");  // the service checks the name
  EXPECT_EQ(parsed->synthesis.seed, 18446744073709551615ULL);
  auto unseeded = ParseOpenAiSpeechRequest(PostJson(kMinimalOpenAi));
  ASSERT_TRUE(unseeded.ok());
  EXPECT_FALSE(unseeded->synthesis.seed.has_value());
  EXPECT_EQ(unseeded->synthesis.voice_mode, "");
}

TEST(ParseOpenAiSpeechRequest, BadSeedsAndVoiceModesNameTheField) {
  auto body = [](const std::string& fields) {
    return PostJson(R"({"model": "tts-1", "input": "Hi.", "voice": "v", )" + fields + "}");
  };
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("seed": -1)")), "seed", "invalid_seed");
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("seed": 1.5)")), "seed", "invalid_type");
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("seed": "7")")), "seed", "invalid_type");
  // Past 2^64 - 1 JSON numbers parse as doubles, but they are whole numbers out of range: the
  // range is the reason (http/seed_field.h), as for -1.
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("seed": 18446744073709551616)")), "seed",
                   "invalid_seed");
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("seed": -1e30)")), "seed", "invalid_seed");
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("voice_mode": 1)")), "voice_mode",
                   "invalid_type");
}

// vLLM-Omni's inline prompt: base64 ("UklGRg==" is "RIFF") or a data: URI of it; the voice may
// then be left out.
TEST(ParseOpenAiSpeechRequest, ReadsAnInlinePromptAsBase64OrADataUri) {
  auto plain = ParseOpenAiSpeechRequest(PostJson(
      R"({"model": "cv", "input": "Hi.", "ref_audio": "UklGRg==", "ref_text": "Hello there."})"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->synthesis.prompt_audio, "RIFF");
  EXPECT_EQ(plain->synthesis.prompt_text, "Hello there.");
  EXPECT_EQ(plain->synthesis.voice, "");
  auto uri = ParseOpenAiSpeechRequest(PostJson(
      R"({"model": "cv", "input": "Hi.", "voice": "alloy", "ref_audio": "data:audio/wav;base64,UklGRg=="})"));
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(uri->synthesis.prompt_audio, "RIFF");
  EXPECT_EQ(uri->synthesis.prompt_text, "");
  auto synthesize = ParseSynthesizeRequest(
      PostJson(R"({"text": "Hi.", "ref_audio": "UklGRg==", "ref_text": "Hello."})"));
  ASSERT_TRUE(synthesize.ok()) << synthesize.status();
  EXPECT_EQ(synthesize->synthesis.prompt_audio, "RIFF");
  EXPECT_EQ(synthesize->synthesis.prompt_text, "Hello.");
}

TEST(ParseOpenAiSpeechRequest, BadInlinePromptsNameRefAudio) {
  auto body = [](const std::string& fields) {
    return PostJson(R"({"model": "cv", "input": "Hi.", )" + fields + "}");
  };
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("ref_audio": "not base64!")")), "ref_audio",
                   "invalid_audio");
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("ref_audio": "data:audio/wav,UklGRg==")")),
                   "ref_audio", "invalid_audio");  // a data: URI that is not base64
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("voice": "v", "ref_audio": 12)")), "ref_audio",
                   "invalid_type");
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("voice": "v", "ref_text": "Hello.")")),
                   "ref_audio", "missing_audio");  // a transcript of nothing
  // Without ref_audio the voice is required as ever.
  ExpectFieldError(ParseOpenAiSpeechRequest(body(R"("ref_audio": "")")), "voice", "missing_field");
}

TEST(ParseOpenAiSpeechRequest, ReadsIntegerTimeoutMs) {
  auto parsed = ParseOpenAiSpeechRequest(
      PostJson(R"({"model": "m", "input": "Hi", "voice": "a", "timeout_ms": 1500})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->synthesis.timeout, std::chrono::milliseconds(1500));
}

TEST(ParseOpenAiSpeechRequest, RejectsFractionalTimeoutMs) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(
                       R"({"model": "m", "input": "Hi", "voice": "a", "timeout_ms": 1.5})")),
                   "timeout_ms", "invalid_type");
}

TEST(ParseOpenAiSpeechRequest, RejectsTimeoutMsAsString) {
  ExpectFieldError(ParseOpenAiSpeechRequest(PostJson(
                       R"({"model": "m", "input": "Hi", "voice": "a", "timeout_ms": "1500"})")),
                   "timeout_ms", "invalid_type");
}

TEST(ParseOpenAiSpeechRequest, IgnoresUnknownFields) {
  auto parsed = ParseOpenAiSpeechRequest(PostJson(
      R"({"model": "m", "input": "Hi", "voice": "a", "user": "u-1", "extra": {"x": [1, 2]}})"));
  EXPECT_TRUE(parsed.ok()) << parsed.status();
}

// ---- /v1/synthesize and /tts ----

TEST(ParseSynthesizeRequest, MinimalBodyGetsSynthesizeDefaults) {
  auto parsed = ParseSynthesizeRequest(PostJson(R"({"text": "Hello."})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const service::SynthesisRequest& synthesis = parsed->synthesis;
  EXPECT_EQ(synthesis.text, "Hello.");
  EXPECT_EQ(synthesis.text_field, "text");
  EXPECT_EQ(synthesis.voice, "");
  EXPECT_EQ(synthesis.model, "");
  EXPECT_EQ(synthesis.format, audio::AudioFormat::kWav);
  EXPECT_EQ(synthesis.speed, 1.0);
  EXPECT_FALSE(synthesis.timeout.has_value());
  EXPECT_EQ(parsed->stream, StreamMode::kNone);
  EXPECT_FALSE(synthesis.streaming);
}

TEST(ParseSynthesizeRequest, FullBodySetsEveryField) {
  auto parsed = ParseSynthesizeRequest(PostJson(R"({
      "text": "Hi.", "voice": "en_US-amy", "model": "piper", "speed": 0.75,
      "response_format": "flac", "stream": true, "timeout_ms": 900})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const service::SynthesisRequest& synthesis = parsed->synthesis;
  EXPECT_EQ(synthesis.text, "Hi.");
  EXPECT_EQ(synthesis.voice, "en_US-amy");
  EXPECT_EQ(synthesis.model, "piper");
  EXPECT_EQ(synthesis.speed, 0.75);
  EXPECT_EQ(synthesis.format, audio::AudioFormat::kFlac);
  EXPECT_EQ(synthesis.timeout, std::chrono::milliseconds(900));
  EXPECT_EQ(parsed->stream, StreamMode::kAudio);
  EXPECT_TRUE(synthesis.streaming);
}

TEST(ParseSynthesizeRequest, ReadsInstructionsVoiceModeAndSeedAsTheOpenAiRouteDoes) {
  auto parsed = ParseSynthesizeRequest(PostJson(
      R"({"text": "Hi.", "instructions": "Speak calmly.", "voice_mode": "instruct", "seed": 7})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->synthesis.instructions, "Speak calmly.");
  EXPECT_EQ(parsed->synthesis.voice_mode, "instruct");
  EXPECT_EQ(parsed->synthesis.seed, 7u);
  auto negative = ParseSynthesizeRequest(PostJson(R"({"text": "Hi.", "seed": -3})"));
  ExpectFieldError(negative, "seed", "invalid_seed");
  // Their length is the service's to check, as for every transport (CheckRequestOptions).
  auto long_instructions = ParseSynthesizeRequest(
      PostJson(R"({"text": "Hi.", "instructions": ")" + std::string(4097, 'a') + R"("})"));
  EXPECT_TRUE(long_instructions.ok()) << long_instructions.status();
}

TEST(ParseSynthesizeRequest, StreamFalseDoesNotStream) {
  auto parsed = ParseSynthesizeRequest(PostJson(R"({"text": "Hi.", "stream": false})"));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->stream, StreamMode::kNone);
}

TEST(ParseSynthesizeRequest, StreamAsStringNamesStream) {
  ExpectFieldError(ParseSynthesizeRequest(PostJson(R"({"text": "Hi.", "stream": "true"})")),
                   "stream", "invalid_type");
}

TEST(ParseSynthesizeRequest, MissingTextNamesText) {
  ExpectFieldError(ParseSynthesizeRequest(PostJson(R"({"voice": "amy"})")), "text",
                   "missing_field");
}

TEST(ParseSynthesizeRequest, VoiceOfTheWrongTypeNamesVoice) {
  ExpectFieldError(ParseSynthesizeRequest(PostJson(R"({"text": "Hi.", "voice": ["amy"]})")),
                   "voice", "invalid_type");
}

TEST(ParseSynthesizeRequest, UnknownResponseFormatNamesResponseFormat) {
  ExpectFieldError(ParseSynthesizeRequest(PostJson(R"({"text": "Hi.", "response_format": "m4a"})")),
                   "response_format", "unsupported_response_format");
}

TEST(ParseSynthesizeRequest, RejectsTextPlainAsUnsupportedMediaType) {
  auto parsed = ParseSynthesizeRequest(PostJson(R"({"text": "Hi."})", "text/plain"));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(core::DetailOf(parsed.status()).reason, core::ErrorReason::kUnsupportedMediaType);
}

TEST(ParseSynthesizeRequest, IgnoresUnknownFields) {
  EXPECT_TRUE(ParseSynthesizeRequest(PostJson(R"({"text": "Hi.", "language": "en"})")).ok());
}

}  // namespace
}  // namespace voxserve::transport::http
