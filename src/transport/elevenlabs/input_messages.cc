#include "transport/elevenlabs/input_messages.h"

#include <cmath>

#include "absl/strings/escaping.h"
#include "core/error.h"
#include "nlohmann/json.hpp"
#include "transport/elevenlabs/error_body.h"
#include "transport/http/dictionary_locators_field.h"

namespace voxserve::transport::elevenlabs {
namespace {

using nlohmann::json;

absl::Status WrongType(const std::string& field, const char* expected) {
  return core::InvalidArgument(field + " must be " + expected, field, "invalid_type");
}

absl::StatusOr<bool> Flag(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_boolean()) return WrongType(name, "a boolean");
  return it->get<bool>();
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void AddContext(json& message, const std::optional<std::string>& context_id) {
  if (context_id) message["contextId"] = *context_id;
}

}  // namespace

absl::StatusOr<InputMessage> ParseInputMessage(std::string_view text) {
  json body = json::parse(text, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return core::InvalidArgument("each message must be a JSON object", {}, "invalid_json");
  }
  InputMessage message;
  if (auto it = body.find("text"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return WrongType("text", "a string");
    message.text = it->get<std::string>();
  }
  if (auto it = body.find("context_id"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return WrongType("context_id", "a string");
    message.context_id = it->get<std::string>();
  }
  for (auto [name, flag] :
       {std::pair{"flush", &message.flush}, std::pair{"close_context", &message.close_context},
        std::pair{"close_socket", &message.close_socket}}) {
    absl::StatusOr<bool> value = Flag(body, name);
    if (!value.ok()) return value.status();
    *flag = *value;
  }
  if (absl::StatusOr<bool> ignored = Flag(body, "try_trigger_generation"); !ignored.ok()) {
    return ignored.status();
  }
  if (auto it = body.find("voice_settings"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) return WrongType("voice_settings", "an object");
    if (auto speed = it->find("speed"); speed != it->end() && !speed->is_null()) {
      if (!speed->is_number()) return WrongType("voice_settings.speed", "a number");
      message.speed = speed->get<double>();  // the service checks the range
    }
  }
  for (const char* name : {"xi_api_key", "xi-api-key", "authorization"}) {
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) continue;
    if (!it->is_string()) return WrongType(name, "a string");
    (std::string_view(name) == "authorization" ? message.authorization : message.api_key) =
        it->get<std::string>();
  }
  if (auto it = body.find(http::kDictionaryLocatorsField); it != body.end() && !it->is_null()) {
    auto locators = http::ParseDictionaryLocators(*it);
    if (!locators.ok()) return locators.status();
    message.dictionaries = *std::move(locators);
  }
  if (auto it = body.find("generation_config"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) return WrongType("generation_config", "an object");
  }
  return message;
}

std::string AudioMessage(std::string_view audio, const service::CharacterAlignment& alignment,
                         const std::optional<std::string>& context_id) {
  json starts = json::array();
  json durations = json::array();
  for (size_t i = 0; i < alignment.characters.size(); ++i) {
    const double start_ms = alignment.start_seconds[i] * 1000.0;
    const double end_ms = alignment.end_seconds[i] * 1000.0;
    starts.push_back(std::lround(start_ms));
    // From rounded ends, so that start + duration of one character is the next one's start.
    durations.push_back(std::lround(end_ms) - std::lround(start_ms));
  }
  json aligned = {{"chars", alignment.characters},
                  {"charStartTimesMs", starts},
                  {"charDurationsMs", durations}};
  json message = {{"audio", absl::Base64Escape(absl::string_view(audio.data(), audio.size()))},
                  {"isFinal", false},
                  {"alignment", aligned},
                  {"normalizedAlignment", aligned}};
  AddContext(message, context_id);
  return Dump(message);
}

std::string FinalMessage(const std::optional<std::string>& context_id) {
  json message = {{"isFinal", true}};
  AddContext(message, context_id);
  return Dump(message);
}

std::string ErrorMessage(const absl::Status& status, int close_code,
                         const std::optional<std::string>& context_id) {
  core::ErrorDetail detail = core::DetailOf(status);
  json message = {
      {"message", ErrorText(status)}, {"error", ErrorCode(status)}, {"code", close_code}};
  if (!detail.param.empty()) message["param"] = detail.param;
  AddContext(message, context_id);
  return Dump(message);
}

}  // namespace voxserve::transport::elevenlabs
