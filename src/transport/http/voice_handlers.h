// The voice-cloning routes (docs/voice-cloning.md), in the shape of OpenAI's custom voices API
// where it has one: POST /v1/audio/voices (multipart form), GET /v1/audio/voices,
// GET and DELETE /v1/audio/voices/{id}. Cloning runs on the service's workers; the I/O thread
// only parses the form.
#pragma once

#include "service/tts_service.h"
#include "transport/http/router.h"

namespace voxserve::transport::http {

// The service outlives the router's handlers. Raises the body limit of POST /v1/audio/voices
// to the service's voices.max_upload_bytes plus room for the form's other fields.
void AddVoiceRoutes(Router& router, service::TtsService& service);

}  // namespace voxserve::transport::http
