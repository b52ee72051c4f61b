#include "transport/elevenlabs/error_body.h"

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "transport/http/error_response.h"

namespace voxserve::transport::elevenlabs {
namespace {

using nlohmann::json;

// The parser's codes for a body that does not have the route's shape: FastAPI's 422.
// output_format is one of the route's query enums, which FastAPI checks the same way.
bool IsBodyShapeError(const core::ErrorDetail& detail) {
  return detail.code == "missing_field" || detail.code == "invalid_type" ||
         detail.code == "invalid_json" || detail.code == "invalid_output_format";
}

// ElevenLabs' error types (errors page, "Error types" table).
std::string ErrorType(int http_status) {
  switch (http_status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return "validation_error";
    case 401:
      return "authentication_error";
    case 403:
      return "authorization_error";
    case 404:
      return "not_found";
    case 429:
      return "rate_limit_error";
    default:
      return http_status >= 500 ? "service_unavailable" : "validation_error";
  }
}

int StatusCodeFor(const absl::Status& status, const core::ErrorDetail& detail) {
  if (IsBodyShapeError(detail)) return 422;
  if (status.code() == absl::StatusCode::kNotFound && detail.param == "voice") return 400;
  return http::HttpStatusFor(status);
}

std::string CodeFor(const absl::Status& status, const core::ErrorDetail& detail) {
  if (status.code() == absl::StatusCode::kNotFound && detail.param == "voice") {
    return "voice_not_found";
  }
  if (status.code() == absl::StatusCode::kUnauthenticated) return "invalid_api_key";
  return detail.code;  // never empty for an error (core::DefaultCode)
}

// voxserve's own hint names its own headers; ElevenLabs' clients send ElevenLabs' header.
std::string MessageFor(const absl::Status& status, const core::ErrorDetail& detail) {
  if (detail.code == "missing_api_key") {
    return "an API key is required: send it in the 'xi-api-key' header (or as "
           "'Authorization: Bearer <key>')";
  }
  return std::string(status.message());
}

json Body(const absl::Status& status, std::string_view request_id, int* http_status) {
  core::ErrorDetail detail = core::DetailOf(status);
  *http_status = StatusCodeFor(status, detail);
  if (*http_status == 422) {
    json loc = json::array({detail.param == "output_format" ? "query" : "body"});
    if (!detail.param.empty()) loc.push_back(detail.param);
    return {{"detail",
             json::array({{{"loc", loc},
                           {"msg", MessageFor(status, detail)},
                           {"type", detail.code == "missing_field" ? "missing" : detail.code}}})}};
  }
  std::string code = CodeFor(status, detail);
  return {{"detail",
           {{"type", ErrorType(*http_status)},
            {"code", code},
            {"status", code},
            {"message", MessageFor(status, detail)},
            {"request_id", std::string(request_id)},
            {"param", detail.param.empty() ? json(nullptr) : json(detail.param)}}}};
}

}  // namespace

std::string ErrorJson(const absl::Status& status, std::string_view request_id) {
  int http_status = 0;
  return Body(status, request_id, &http_status)
      .dump(-1, ' ', false, json::error_handler_t::replace);
}

http::HttpResponse ErrorResponse(const absl::Status& status, std::string_view request_id) {
  int http_status = 0;
  json body = Body(status, request_id, &http_status);
  http::HttpResponse response =
      http::JsonResponse(http_status, body.dump(-1, ' ', false, json::error_handler_t::replace));
  if (auto retry = core::DetailOf(status).retry_after_seconds) {
    response.SetHeader("Retry-After", std::to_string(*retry));
  }
  return response;
}

std::string ErrorCode(const absl::Status& status) {
  return CodeFor(status, core::DetailOf(status));
}

std::string ErrorText(const absl::Status& status) {
  return MessageFor(status, core::DetailOf(status));
}

}  // namespace voxserve::transport::elevenlabs
