// ElevenLabs' "pronunciation_dictionary_locators" as every JSON API reads it (REST, the
// WebSocket stream, ElevenLabs): [{"pronunciation_dictionary_id": "pd_…", "version_id": "pdv_…"}],
// version_id optional (the dictionary's latest). Whether the dictionaries exist is the service's
// to say (service::PronunciationDictionaries::ForRequest).
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "service/synthesis_request.h"

namespace voxserve::transport::http {

inline constexpr const char* kDictionaryLocatorsField = "pronunciation_dictionary_locators";

// `value` is not null. InvalidArgument `invalid_type` naming the field (or the item) for
// another shape.
absl::StatusOr<std::vector<service::DictionaryLocator>> ParseDictionaryLocators(
    const nlohmann::json& value);

}  // namespace voxserve::transport::http
