#include "transport/http/error_response.h"

#include "core/error.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::http {
namespace {

std::string ErrorType(int http_status) {
  switch (http_status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 429: return "rate_limit_error";
    case 499: return "cancelled";
    case 504: return "timeout_error";
    default: return http_status >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace

int HttpStatusFor(const absl::Status& status) {
  switch (core::DetailOf(status).reason) {
    case core::ErrorReason::kPayloadTooLarge: return 413;
    // Not the request's own size, but what it would make: still "too large", and no retry helps.
    case core::ErrorReason::kOutputTooLong:
      return 413;
    case core::ErrorReason::kUnsupportedMediaType: return 415;
    case core::ErrorReason::kMethodNotAllowed: return 405;
    case core::ErrorReason::kQueueFull: return 429;
    case core::ErrorReason::kDraining: return 503;
    case core::ErrorReason::kInsufficientStorage: return 507;
    case core::ErrorReason::kUnspecified: break;
  }
  switch (status.code()) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition: return 400;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists: return 409;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    case absl::StatusCode::kCancelled: return 499;  // client closed the request (nginx's code)
    case absl::StatusCode::kUnimplemented: return 501;
    default: return 500;
  }
}

std::string ErrorJson(const absl::Status& status) {
  core::ErrorDetail detail = core::DetailOf(status);
  nlohmann::json error = {
      {"message", std::string(status.message())},
      {"type", ErrorType(HttpStatusFor(status))},
      {"param", detail.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(detail.param)},
      {"code", detail.code},  // never empty for an error (core::DefaultCode)
  };
  return nlohmann::json{{"error", error}}.dump(-1, ' ', false,
                                                nlohmann::json::error_handler_t::replace);
}

HttpResponse ErrorResponse(const absl::Status& status) {
  HttpResponse response = JsonResponse(HttpStatusFor(status), ErrorJson(status));
  if (auto retry = core::DetailOf(status).retry_after_seconds) {
    response.SetHeader("Retry-After", std::to_string(*retry));
  }
  // RFC 6750: a 401 names the scheme the client should use.
  if (response.status == 401) response.SetHeader("WWW-Authenticate", "Bearer realm=\"voxserve\"");
  return response;
}

}  // namespace voxserve::transport::http
