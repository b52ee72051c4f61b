// The one place where a Status becomes an HTTP answer: status code, OpenAI-style JSON error body
// {"error": {"message", "type", "param", "code"}} and Retry-After where the error carries one.
#pragma once

#include "absl/status/status.h"
#include "transport/http/http_message.h"

namespace voxserve::transport::http {

int HttpStatusFor(const absl::Status& status);
HttpResponse ErrorResponse(const absl::Status& status);
// The JSON body alone, for protocols that carry errors inside a stream (SSE error events).
std::string ErrorJson(const absl::Status& status);

}  // namespace voxserve::transport::http
