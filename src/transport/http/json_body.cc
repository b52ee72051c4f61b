#include "transport/http/json_body.h"

#include "absl/strings/match.h"
#include "core/error.h"
#include "text/utf8.h"

namespace voxserve::transport::http {
namespace {

using nlohmann::json;

// nlohmann's message without its "[json.exception.parse_error.101] " tag, which means nothing
// to a client: "parse error at line 1, column 9: syntax error while parsing value - invalid
// literal; last read: '{"a": x'", "number overflow parsing '1e309'".
std::string PlainJsonError(const json::exception& error) {
  std::string_view message = error.what();
  if (message.starts_with("[json.exception.")) {
    if (size_t end = message.find("] "); end != std::string_view::npos) {
      message.remove_prefix(end + 2);
    }
  }
  // Its "last read: '...'" repeats the client's bytes, up to a whole unterminated string.
  constexpr size_t kMaxMessageChars = 200;
  if (error.id == 406)
    return "a number is too large: " + core::Truncated(message, kMaxMessageChars);
  return core::Truncated(message, kMaxMessageChars);
}

}  // namespace

absl::StatusOr<json> ParseJsonObject(const HttpRequest& request) {
  std::string_view content_type = request.Header("content-type");
  std::string_view media_type = content_type.substr(0, content_type.find(';'));
  while (!media_type.empty() && media_type.back() == ' ') media_type.remove_suffix(1);
  // Media types are case-insensitive (RFC 9110 §8.3.1).
  if (!absl::EqualsIgnoreCase(absl::string_view(media_type.data(), media_type.size()),
                              "application/json")) {
    return core::UnsupportedMediaType("Content-Type must be application/json (got " +
                                      core::Quoted(content_type) + ")");
  }
  if (absl::Status status = text::ValidateUtf8(request.body, "body"); !status.ok()) {
    return core::InvalidArgument(
        "request body is not valid UTF-8: " + std::string(status.message()), {}, "invalid_utf8");
  }
  json body;
  try {
    body = json::parse(request.body);
  } catch (const json::exception& error) {
    // Any field's syntax error, and numbers past a double's range ("1e309", out_of_range.406).
    return core::InvalidArgument("request body is not valid JSON: " + PlainJsonError(error), {},
                                 "invalid_json");
  }
  if (!body.is_object()) {
    return core::InvalidArgument("request body must be a JSON object", {}, "invalid_json");
  }
  return body;
}

}  // namespace voxserve::transport::http
