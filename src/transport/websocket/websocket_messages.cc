#include "transport/websocket/websocket_messages.h"

#include <climits>

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "service/response_cache.h"
#include "transport/http/dictionary_locators_field.h"
#include "transport/http/error_response.h"
#include "transport/http/seed_field.h"
#include "transport/http/text_normalization_field.h"

namespace voxserve::transport::websocket {
namespace {

using nlohmann::json;
using Event = nlohmann::ordered_json;  // keys in the order written: "type" first

absl::StatusOr<json> ParseObject(std::string_view text) {
  json message = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (message.is_discarded()) {
    return core::InvalidArgument("a message must be valid JSON", {}, "invalid_json");
  }
  if (!message.is_object()) {
    return core::InvalidArgument("a message must be a JSON object", {}, "invalid_json");
  }
  return message;
}

absl::Status WrongType(const std::string& field, const char* expected) {
  return core::InvalidArgument(field + " must be " + expected, field, "invalid_type");
}

// Absent or null: nothing. Returns the field when it is set.
const json* Field(const json& message, const char* name) {
  auto it = message.find(name);
  return it == message.end() || it->is_null() ? nullptr : &*it;
}

absl::Status ReadString(const json& message, const char* name, std::string* out) {
  const json* value = Field(message, name);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_string()) return WrongType(name, "a string");
  *out = value->get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadBool(const json& message, const char* name, bool* out) {
  const json* value = Field(message, name);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_boolean()) return WrongType(name, "a boolean");
  *out = value->get<bool>();
  return absl::OkStatus();
}

// OpenAI's two shapes: a voice name, or a custom voice {"id": "..."}.
absl::Status ReadVoice(const json& message, std::string* voice) {
  const json* value = Field(message, "voice");
  if (value == nullptr) return absl::OkStatus();
  if (value->is_string()) {
    *voice = value->get<std::string>();
  } else if (value->is_object() && value->contains("id") && (*value)["id"].is_string()) {
    *voice = (*value)["id"].get<std::string>();
  } else {
    return WrongType("voice", "a voice name or an object with a string \"id\"");
  }
  return absl::OkStatus();
}

absl::Status ReadFormat(const json& message, audio::AudioFormat* format) {
  std::string name = "pcm";
  if (absl::Status status = ReadString(message, "response_format", &name); !status.ok()) {
    return status;
  }
  absl::StatusOr<audio::AudioFormat> parsed = audio::ParseAudioFormat(name);
  if (!parsed.ok()) return parsed.status();
  *format = *parsed;
  return absl::OkStatus();
}

absl::Status ReadSpeed(const json& message, double* speed) {
  const json* value = Field(message, "speed");
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_number()) return WrongType("speed", "a number");
  *speed = value->get<double>();
  return absl::OkStatus();
}

// As REST's seed (http/seed_field.h): 0 .. 2^64-1.
absl::Status ReadSeed(const json& message, std::optional<uint64_t>* out) {
  const json* value = Field(message, "seed");
  if (value == nullptr) return absl::OkStatus();
  auto seed = http::ParseSeed(*value);
  if (!seed.ok()) return seed.status();
  *out = *seed;
  return absl::OkStatus();
}

absl::Status ReadTimeout(const json& message, std::optional<std::chrono::milliseconds>* out) {
  const json* value = Field(message, "timeout_ms");
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_number_integer()) return WrongType("timeout_ms", "an integer");
  // Unsigned integers beyond long long saturate; the service checks the range.
  *out = std::chrono::milliseconds(value->is_number_unsigned() &&
                                           value->get<unsigned long long>() > LLONG_MAX
                                       ? LLONG_MAX
                                       : value->get<long long>());
  return absl::OkStatus();
}

// HTTP's Cache-Control, as a config field (browsers cannot set headers on a WebSocket).
absl::Status ReadCacheControl(const json& message, service::CachePolicy* out) {
  std::string value;
  if (absl::Status status = ReadString(message, "cache_control", &value); !status.ok()) {
    return status;
  }
  *out = service::ParseCacheControl(value);
  return absl::OkStatus();
}

absl::Status ReadTextNormalization(const json& message, std::optional<bool>* out) {
  auto normalize = http::ParseTextNormalization(Field(message, http::kTextNormalizationField));
  if (!normalize.ok()) return normalize.status();
  *out = *normalize;
  return absl::OkStatus();
}

bool HasTextFields(const json& message) {
  return message.contains("text") || message.contains("flush") || message.contains("close");
}

// Any field of the config message: a second config is recognised by any of them, not only
// "voice" (a config of {"speed": 2} alone is as much a repeat as one with a voice).
bool HasConfigFields(const json& message) {
  for (const char* name :
       {"model", "voice", "response_format", "speed", "instructions", "voice_mode", "seed",
        "timeout_ms", "timestamps", "cache_control", http::kTextNormalizationField,
        "input_format", http::kDictionaryLocatorsField}) {
    if (message.contains(name)) return true;
  }
  return false;
}

Event UsageJson(const service::SynthesisSummary& summary) {
  return {{"input_characters", summary.input_chars},
          {"audio_seconds", summary.audio_seconds},
          {"segments", summary.segments}};
}

Event TimingsJson(const service::SynthesisSummary& summary) {
  return {{"queue_wait_seconds", summary.queue_wait_seconds},
          {"time_to_first_audio_seconds", summary.time_to_first_audio_seconds.value_or(0)},
          {"total_seconds", summary.total_seconds}};
}

std::string Dump(const Event& event) {
  return event.dump(-1, ' ', false, Event::error_handler_t::replace);
}

}  // namespace

absl::StatusOr<StreamConfig> ParseConfigMessage(std::string_view text) {
  absl::StatusOr<json> message = ParseObject(text);
  if (!message.ok()) return message.status();
  if (HasTextFields(*message)) {
    return core::InvalidArgument(
        "the first message must be the config ({\"voice\": ...}); text comes after it", "config",
        "missing_config");
  }
  if (message->contains("ref_audio") || message->contains("ref_text")) {
    // Not ignored: the session would speak another voice than the client asked for.
    return core::InvalidArgument(
        "ref_audio is taken by POST /v1/audio/speech and gRPC Synthesize; a WebSocket session "
        "speaks registered voices (POST /v1/audio/voices, then name it in voice)",
        "ref_audio", "ref_audio_not_supported");
  }
  StreamConfig config;
  for (absl::Status status :
       {ReadString(*message, "model", &config.model), ReadVoice(*message, &config.voice),
        ReadFormat(*message, &config.format), ReadSpeed(*message, &config.speed),
        ReadString(*message, "instructions", &config.instructions),
        ReadString(*message, "voice_mode", &config.voice_mode), ReadSeed(*message, &config.seed),
        ReadString(*message, "input_format", &config.input_format),
        ReadTimeout(*message, &config.timeout), ReadCacheControl(*message, &config.cache_policy),
        ReadTextNormalization(*message, &config.normalize_text)}) {
    if (!status.ok()) return status;
  }
  if (const json* locators = Field(*message, http::kDictionaryLocatorsField)) {
    auto parsed = http::ParseDictionaryLocators(*locators);
    if (!parsed.ok()) return parsed.status();
    config.dictionaries = *std::move(parsed);
  }
  absl::StatusOr<http::TimestampsMode> timestamps =
      http::ParseTimestampsMode(Field(*message, "timestamps"));
  if (!timestamps.ok()) return timestamps.status();
  config.timestamps = *timestamps;
  return config;
}

absl::StatusOr<ClientMessage> ParseClientMessage(std::string_view text) {
  absl::StatusOr<json> message = ParseObject(text);
  if (!message.ok()) return message.status();
  if (!HasTextFields(*message)) {
    if (HasConfigFields(*message)) {
      return core::InvalidArgument("the config may be sent once, as the first message", "config",
                                   "repeated_config");
    }
    return core::InvalidArgument("a message must hold \"text\", \"flush\" or \"close\"", {},
                                 "empty_message");
  }
  ClientMessage parsed;
  if (const json* value = Field(*message, "text")) {
    if (!value->is_string()) return WrongType("text", "a string");
    parsed.text = value->get<std::string>();
  }
  for (absl::Status status :
       {ReadBool(*message, "flush", &parsed.flush), ReadBool(*message, "close", &parsed.close)}) {
    if (!status.ok()) return status;
  }
  return parsed;
}

CloseCode CloseCodeFor(const absl::Status& status) {
  if (status.ok()) return CloseCode::kNormal;
  switch (core::DetailOf(status).reason) {
    case core::ErrorReason::kDraining:
      return CloseCode::kGoingAway;
    case core::ErrorReason::kQueueFull:
      return CloseCode::kTryAgainLater;
    case core::ErrorReason::kPayloadTooLarge:
      return CloseCode::kTooBig;
    case core::ErrorReason::kOutputTooLong:  // no message was too big: the stream was too long
      return CloseCode::kPolicy;
    default:
      break;
  }
  const int http_status = http::HttpStatusFor(status);
  if (http_status == 503) return CloseCode::kTryAgainLater;  // e.g. the model is still loading
  return http_status >= 500 ? CloseCode::kServerError : CloseCode::kPolicy;
}

std::string ReadyEvent(std::string_view request_id, audio::AudioFormat format) {
  return Dump({{"type", "ready"},
               {"request_id", std::string(request_id)},
               {"response_format", std::string(audio::FormatName(format))}});
}

std::string SegmentDoneEvent(const service::SentenceReport& report,
                             http::TimestampsMode timestamps) {
  Event event = {{"type", "segment_done"},
                 {"index", report.index},
                 {"text", report.text},
                 {"audio_bytes", report.audio_bytes},
                 {"sample_rate", report.sample_rate},
                 {"usage", UsageJson(report.summary)},
                 {"timings", TimingsJson(report.summary)}};
  if (timestamps != http::TimestampsMode::kNone) {
    event["timestamps"] = http::TimestampEntries(report.timings, timestamps);
    event["timestamps_kind"] = http::CombinedTimingsKind(report.timings);
  }
  return Dump(event);
}

std::string DoneEvent(const service::SynthesisSummary& totals) {
  return Dump({{"type", "done"},
               {"model", totals.model},
               {"voice", totals.voice},
               {"usage", UsageJson(totals)},
               {"timings", TimingsJson(totals)}});
}

std::string ErrorEvent(const absl::Status& status) {
  return Dump({{"type", "error"},
               {"status", http::HttpStatusFor(status)},
               {"error", Event::parse(http::ErrorJson(status))["error"]}});
}

}  // namespace voxserve::transport::websocket
