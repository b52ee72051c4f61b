// The synthesis routes: POST /v1/audio/speech (OpenAI) and POST /v1/synthesize (+ /tts alias).
#pragma once

#include "service/tts_service.h"
#include "transport/http/router.h"

namespace voxserve::transport::http {

// The service outlives the router's handlers.
void AddSpeechRoutes(Router& router, service::TtsService& service);

}  // namespace voxserve::transport::http
