// The "apply_text_normalization" field (ElevenLabs' name and values) as every JSON API reads it
// (REST, ElevenLabs, the WebSocket stream): the request's override of text.normalize
// (docs/text-normalization.md).
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::http {

inline constexpr const char* kTextNormalizationField = "apply_text_normalization";

// "auto" or null: unset (the server's text.normalize, for the engines that read characters);
// "on" or true: normalize, on every engine; "off" or false: never. Anything else:
// InvalidArgument `invalid_text_normalization` naming the field.
absl::StatusOr<std::optional<bool>> ParseTextNormalization(const nlohmann::json* value);

}  // namespace voxserve::transport::http
