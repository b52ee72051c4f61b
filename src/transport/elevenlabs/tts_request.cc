#include "transport/elevenlabs/tts_request.h"

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "transport/http/cache_headers.h"
#include "transport/http/dictionary_locators_field.h"
#include "transport/http/query_string.h"
#include "transport/http/seed_field.h"
#include "transport/http/text_normalization_field.h"

namespace voxserve::transport::elevenlabs {
namespace {

using nlohmann::json;

// ElevenLabs' own model ids (GET /v1/models there); a client written for ElevenLabs sends one.
constexpr std::string_view kElevenLabsModelPrefix = "eleven_";

absl::Status WrongType(const std::string& field, const char* expected) {
  return core::InvalidArgument(field + " must be " + expected, field, "invalid_type");
}

}  // namespace

absl::StatusOr<TtsRequest> ParseTtsRequest(const http::HttpRequest& request,
                                           std::string_view voice_id) {
  TtsRequest parsed;
  service::SynthesisRequest& synthesis = parsed.synthesis;
  synthesis.text_field = "text";
  synthesis.voice = std::string(voice_id);
  synthesis.streaming = true;  // each sentence's bytes as they come; MP3 stays constant bit rate

  auto query = http::ParseQuery(request.query);
  if (!query.ok()) return query.status();
  std::string format_name(kDefaultOutputFormat);
  if (auto it = query->find("output_format"); it != query->end()) format_name = it->second;
  auto output = ParseOutputFormat(format_name);
  if (!output.ok()) return output.status();
  parsed.output = *output;
  synthesis.format = output->format;
  synthesis.sample_rate = output->sample_rate;

  // ElevenLabs' switch for SSML in `text` (docs/ssml.md), in the query as on its WebSockets or
  // in the body: true parses it; false or absent leaves the service's rule (SSML only when the
  // text starts with "<speak").
  if (auto it = query->find("enable_ssml_parsing"); it != query->end() && it->second == "true") {
    synthesis.input_format = "ssml";
  }
  json body;
  try {
    body = json::parse(request.body);
  } catch (const json::exception& error) {
    // nlohmann's message repeats what it last read: bounded, as every echo of client input.
    return core::InvalidArgument(
        "request body is not valid JSON: " + core::Truncated(error.what(), 200), {},
        "invalid_json");
  }
  if (!body.is_object()) {
    return core::InvalidArgument("request body must be a JSON object", {}, "invalid_json");
  }
  auto text = body.find("text");
  if (text == body.end() || text->is_null()) {
    return core::InvalidArgument("text is required", "text", "missing_field");
  }
  if (!text->is_string()) return WrongType("text", "a string");
  parsed.text = text->get<std::string>();

  if (auto model = body.find("model_id"); model != body.end() && !model->is_null()) {
    if (!model->is_string()) return WrongType("model_id", "a string");
    std::string id = model->get<std::string>();
    if (!id.starts_with(kElevenLabsModelPrefix)) synthesis.model = std::move(id);
  }
  if (auto seed = body.find("seed"); seed != body.end() && !seed->is_null()) {
    // As /v1's (a negative seed used to pass here, unused: now it is the same 400).
    auto parsed_seed = http::ParseSeed(*seed);
    if (!parsed_seed.ok()) return parsed_seed.status();
    synthesis.seed = *parsed_seed;
  }
  auto normalize = body.find(http::kTextNormalizationField);
  auto normalize_text =
      http::ParseTextNormalization(normalize == body.end() ? nullptr : &*normalize);
  if (!normalize_text.ok()) return normalize_text.status();
  synthesis.normalize_text = *normalize_text;
  synthesis.cache_policy = http::CachePolicyOf(request);
  if (auto locators = body.find(http::kDictionaryLocatorsField);
      locators != body.end() && !locators->is_null()) {
    auto parsed_locators = http::ParseDictionaryLocators(*locators);
    if (!parsed_locators.ok()) return parsed_locators.status();
    synthesis.dictionaries = *std::move(parsed_locators);
  }
  if (auto ssml = body.find("enable_ssml_parsing"); ssml != body.end() && !ssml->is_null()) {
    if (!ssml->is_boolean()) return WrongType("enable_ssml_parsing", "a boolean");
    if (ssml->get<bool>()) synthesis.input_format = "ssml";
  }
  if (auto settings = body.find("voice_settings"); settings != body.end() && !settings->is_null()) {
    if (!settings->is_object()) return WrongType("voice_settings", "an object");
    if (auto speed = settings->find("speed"); speed != settings->end() && !speed->is_null()) {
      if (!speed->is_number()) return WrongType("voice_settings.speed", "a number");
      synthesis.speed = speed->get<double>();  // the service checks the range
    }
  }
  return parsed;
}

}  // namespace voxserve::transport::elevenlabs
