// The one place where a Status becomes an ElevenLabs-shaped HTTP error, as its docs describe
// (https://elevenlabs.io/docs/eleven-api/resources/errors): {"detail": {"type", "code",
// "message", "status" (the legacy twin of code), "request_id", "param"}}, and for a body that is
// not the JSON the route takes FastAPI's 422 {"detail": [{"loc", "msg", "type"}]}, which the
// SDK's UnprocessableEntityError carries (its HttpValidationError type).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "transport/http/http_message.h"

namespace voxserve::transport::elevenlabs {

// The status code follows voxserve's (http::HttpStatusFor), with two ElevenLabs exceptions:
// malformed bodies are 422 and an unknown voice is 400 `voice_not_found`
// (https://help.elevenlabs.io/hc/en-us/articles/19572237925521-API-Error-Code-400-or-401).
http::HttpResponse ErrorResponse(const absl::Status& status, std::string_view request_id = {});
// The `code` of the body (e.g. "invalid_api_key", "voice_not_found"), for the WebSockets' errors.
std::string ErrorCode(const absl::Status& status);
// The `message` of the body: the status's, but for a missing key, whose hint names `xi-api-key`.
std::string ErrorText(const absl::Status& status);
// The JSON alone, for errors inside a stream.
std::string ErrorJson(const absl::Status& status, std::string_view request_id = {});

}  // namespace voxserve::transport::elevenlabs
