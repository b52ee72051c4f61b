// ElevenLabs' text-to-speech request (path voice_id, query output_format, JSON body) read into
// what voxserve's service takes. Reference:
// https://elevenlabs.io/docs/api-reference/text-to-speech/convert
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "service/synthesis_request.h"
#include "transport/elevenlabs/output_format.h"
#include "transport/http/http_message.h"

namespace voxserve::transport::elevenlabs {

struct TtsRequest {
  // Model, voice, format, sample rate and speed; the text goes to the SpeechSession separately.
  service::SynthesisRequest synthesis;
  std::string text;
  OutputFormat output;
};

// Body: `text` (required), `model_id` (an "eleven_*" id means voxserve's default model; any
// other names a voxserve model), `voice_settings.speed`, `seed`, `apply_text_normalization`
// (auto, on, off), pronunciation_dictionary_locators (docs/pronunciation-dictionaries.md) and
// the Cache-Control header (honoured). Accepted and ignored: voice_settings' stability,
// similarity_boost, style, use_speaker_boost; language_code, previous_text, next_text,
// previous/next_request_ids and the query's
// optimize_streaming_latency and enable_logging.
// Errors name the field (error_body.h turns shape errors into 422).
absl::StatusOr<TtsRequest> ParseTtsRequest(const http::HttpRequest& request,
                                           std::string_view voice_id);

}  // namespace voxserve::transport::elevenlabs
