// /v1/pronunciation-dictionaries: ElevenLabs' pronunciation-dictionary API (add-from-file,
// add-from-rules, list, get, PATCH name/archived, add-rules, remove-rules, set-rules, download
// a version as PLS) plus DELETE, over service::DictionaryBackend (docs/pronunciation-
// dictionaries.md). The same handlers serve /elevenlabs/v1/pronunciation-dictionaries with
// ElevenLabs' error bodies: one API, two prefixes.
#pragma once

#include <memory>
#include <string_view>

#include "service/tts_service.h"
#include "transport/http/http_exchange.h"
#include "transport/http/router.h"

namespace voxserve::transport::http {

inline constexpr std::string_view kDictionariesPath = "/v1/pronunciation-dictionaries";

// Routes under `prefix` + kDictionariesPath ("" for voxserve's own, "/elevenlabs" for
// ElevenLabs'), answering errors with `format_error` (null: ErrorResponse). The uploads get
// dictionaries.max_upload_bytes as their body limit.
void AddDictionaryRoutes(Router& router, service::TtsService& service, std::string_view prefix,
                         ErrorFormatter format_error);

}  // namespace voxserve::transport::http
