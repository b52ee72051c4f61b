// The synthesis routes: POST /v1/audio/speech (OpenAI) and POST /v1/synthesize (+ /tts alias).
#pragma once

#include "service/tts_service.h"
#include "transport/auth/authenticator.h"
#include "transport/http/router.h"

namespace voxserve::transport::http {

// The service (and the authenticator, when given) outlive the router's handlers. With an
// authenticator, each synthesis takes a token and a concurrency slot of the caller's key.
void AddSpeechRoutes(Router& router, service::TtsService& service,
                     const auth::Authenticator* authenticator = nullptr);

}  // namespace voxserve::transport::http
