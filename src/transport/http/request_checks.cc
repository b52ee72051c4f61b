#include "transport/http/request_checks.h"

#include <algorithm>
#include <string>

#include "absl/strings/escaping.h"
#include "core/error.h"
#include "transport/http/error_response.h"

namespace voxserve::transport::http {
namespace {

// RFC 6455 §4.2.1: the key is 16 random bytes in base64, which is always 24 characters.
constexpr size_t kEncodedKeyLength = 24;
constexpr size_t kKeyBytes = 16;

}  // namespace

absl::Status CheckHost(const HttpRequest& request, unsigned version) {
  const auto hosts = std::count_if(request.headers.begin(), request.headers.end(),
                                   [](const auto& header) { return header.first == "host"; });
  if (hosts > 1) {
    return core::InvalidArgument(
        "the request has " + std::to_string(hosts) + " Host headers; exactly one is allowed", {},
        "bad_request");
  }
  if (hosts == 0 && version >= 11) {
    return core::InvalidArgument("an HTTP/1.1 request must have a Host header", {}, "bad_request");
  }
  return absl::OkStatus();
}

std::optional<HttpResponse> RefuseWebSocketHandshake(const HttpRequest& request) {
  if (request.Header("sec-websocket-version") != "13") {
    HttpResponse response = ErrorResponse(core::InvalidArgument(
        "Sec-WebSocket-Version must be 13 (RFC 6455)", {}, "unsupported_websocket_version"));
    response.status = 426;  // Upgrade Required, naming the version this server speaks
    response.SetHeader("Sec-WebSocket-Version", "13");
    return response;
  }
  const std::string_view key = request.Header("sec-websocket-key");
  std::string decoded;
  if (key.size() != kEncodedKeyLength ||
      !absl::Base64Unescape(absl::string_view(key.data(), key.size()), &decoded) ||
      decoded.size() != kKeyBytes) {
    return ErrorResponse(core::InvalidArgument(
        "Sec-WebSocket-Key must be the base64 encoding of 16 bytes (RFC 6455 §4.1)", {},
        "invalid_websocket_key"));
  }
  return std::nullopt;
}

}  // namespace voxserve::transport::http
