#include "core/error.h"

#include <charconv>

#include "absl/strings/cord.h"

namespace voxserve::core {
namespace {

// Debian's absl is built without std::string_view aliasing: absl::string_view is its own type.
constexpr absl::string_view kReasonUrl = "voxserve/reason";
constexpr absl::string_view kParamUrl = "voxserve/param";
constexpr absl::string_view kCodeUrl = "voxserve/code";
constexpr absl::string_view kRetryAfterUrl = "voxserve/retry_after";
constexpr absl::string_view kModelUrl = "voxserve/model";

absl::string_view ToAbsl(std::string_view text) { return {text.data(), text.size()}; }

constexpr char kEllipsis[] = "\xE2\x80\xA6";  // U+2026

std::string SizeNote(std::string_view value) {
  return " (" + std::to_string(value.size()) + " bytes)";
}

// At most max_chars code points of `value` (never cut inside one), control characters as \xNN
// so a message stays one line. *cut: something was left out.
std::string EscapedPrefix(std::string_view value, size_t max_chars, bool* cut) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const auto byte = static_cast<unsigned char>(value[i]);
    const bool continuation = (byte & 0xC0) == 0x80;
    if (!continuation && chars++ == max_chars) {
      *cut = true;
      return out;
    }
    if (byte < 0x20 || byte == 0x7F) {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    } else {
      out += static_cast<char>(byte);
    }
  }
  *cut = false;
  return out;
}

absl::Status Make(absl::StatusCode code, std::string_view message, ErrorReason reason,
                  std::string_view param, std::string_view error_code) {
  absl::Status status(code, ToAbsl(message));
  if (reason != ErrorReason::kUnspecified) {
    status.SetPayload(kReasonUrl, absl::Cord(std::to_string(static_cast<int>(reason))));
  }
  if (!param.empty()) status.SetPayload(kParamUrl, absl::Cord(ToAbsl(param)));
  if (!error_code.empty()) status.SetPayload(kCodeUrl, absl::Cord(ToAbsl(error_code)));
  return status;
}

std::optional<int> IntPayload(const absl::Status& status, absl::string_view url) {
  auto cord = status.GetPayload(url);
  if (!cord) return std::nullopt;
  std::string text(*cord);
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

absl::Status InvalidArgument(std::string_view message, std::string_view param,
                             std::string_view code) {
  return Make(absl::StatusCode::kInvalidArgument, message, ErrorReason::kUnspecified, param, code);
}

absl::Status NotFound(std::string_view message, std::string_view param, std::string_view code) {
  return Make(absl::StatusCode::kNotFound, message, ErrorReason::kUnspecified, param, code);
}

absl::Status PayloadTooLarge(std::string_view message, std::string_view param) {
  return Make(absl::StatusCode::kInvalidArgument, message, ErrorReason::kPayloadTooLarge, param,
              "payload_too_large");
}

absl::Status OutputTooLong(std::string_view message) {
  return Make(absl::StatusCode::kInvalidArgument, message, ErrorReason::kOutputTooLong, {},
              "output_too_long");
}

absl::Status AlreadyExists(std::string_view message, std::string_view param,
                           std::string_view code) {
  return Make(absl::StatusCode::kAlreadyExists, message, ErrorReason::kUnspecified, param, code);
}

absl::Status MakeError(absl::StatusCode status_code, std::string_view message,
                       std::string_view param, std::string_view code) {
  return Make(status_code, message, ErrorReason::kUnspecified, param, code);
}

absl::Status UnsupportedMediaType(std::string_view message) {
  return Make(absl::StatusCode::kInvalidArgument, message, ErrorReason::kUnsupportedMediaType, {},
              "unsupported_media_type");
}

absl::Status MethodNotAllowed(std::string_view message) {
  return Make(absl::StatusCode::kUnimplemented, message, ErrorReason::kMethodNotAllowed, {},
              "method_not_allowed");
}

absl::Status QueueFull(std::string_view message, int retry_after_seconds) {
  absl::Status status = Make(absl::StatusCode::kResourceExhausted, message,
                             ErrorReason::kQueueFull, {}, "queue_full");
  status.SetPayload(kRetryAfterUrl, absl::Cord(std::to_string(retry_after_seconds)));
  return status;
}

absl::Status Draining(std::string_view message) {
  return Make(absl::StatusCode::kUnavailable, message, ErrorReason::kDraining, {},
              "server_draining");
}

absl::Status InstanceLost(std::string_view message, int retry_after_seconds) {
  absl::Status status = Make(absl::StatusCode::kUnavailable, message, ErrorReason::kUnspecified,
                             {}, "engine_instance_lost");
  status.SetPayload(kRetryAfterUrl, absl::Cord(std::to_string(retry_after_seconds)));
  return status;
}

absl::Status StoreUnavailable(std::string_view message, int retry_after_seconds,
                              std::string_view code) {
  absl::Status status =
      Make(absl::StatusCode::kUnavailable, message, ErrorReason::kUnspecified, {}, code);
  status.SetPayload(kRetryAfterUrl, absl::Cord(std::to_string(retry_after_seconds)));
  return status;
}

absl::Status Unauthenticated(std::string_view message, std::string_view code) {
  return Make(absl::StatusCode::kUnauthenticated, message, ErrorReason::kUnspecified, {}, code);
}

absl::Status PermissionDenied(std::string_view message, std::string_view param,
                              std::string_view code) {
  return Make(absl::StatusCode::kPermissionDenied, message, ErrorReason::kUnspecified, param, code);
}

absl::Status RateLimited(std::string_view message, std::string_view code,
                         int retry_after_seconds) {
  absl::Status status =
      Make(absl::StatusCode::kResourceExhausted, message, ErrorReason::kUnspecified, {}, code);
  status.SetPayload(kRetryAfterUrl, absl::Cord(std::to_string(retry_after_seconds)));
  return status;
}

absl::Status Internal(std::string_view message) {
  return Make(absl::StatusCode::kInternal, message, ErrorReason::kUnspecified, {}, {});
}

absl::Status InsufficientStorage(std::string_view message, std::string_view code) {
  return Make(absl::StatusCode::kResourceExhausted, message, ErrorReason::kInsufficientStorage, {},
              code);
}

absl::Status WithModel(absl::Status status, std::string_view model_id) {
  if (!status.ok()) status.SetPayload(kModelUrl, absl::Cord(ToAbsl(model_id)));
  return status;
}

std::string ModelOf(const absl::Status& status) {
  auto cord = status.GetPayload(kModelUrl);
  return cord ? std::string(*cord) : std::string();
}

std::string_view DefaultCode(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return "";
    case absl::StatusCode::kInvalidArgument:
      return "invalid_request";
    case absl::StatusCode::kFailedPrecondition:
      return "failed_precondition";
    case absl::StatusCode::kOutOfRange:
      return "out_of_range";
    case absl::StatusCode::kNotFound:
      return "not_found";
    case absl::StatusCode::kAlreadyExists:
      return "already_exists";
    case absl::StatusCode::kPermissionDenied:
      return "permission_denied";
    case absl::StatusCode::kUnauthenticated:
      return "unauthenticated";
    case absl::StatusCode::kResourceExhausted:
      return "resource_exhausted";
    case absl::StatusCode::kUnavailable:
      return "unavailable";
    case absl::StatusCode::kDeadlineExceeded:
      return "timeout";
    case absl::StatusCode::kCancelled:
      return "cancelled";
    case absl::StatusCode::kUnimplemented:
      return "not_implemented";
    case absl::StatusCode::kAborted:
      return "aborted";
    default:
      return "internal_error";  // kInternal, kUnknown, kDataLoss
  }
}

std::string Truncated(std::string_view value, size_t max_chars) {
  bool cut = false;
  std::string out = EscapedPrefix(value, max_chars, &cut);
  if (cut) out += kEllipsis + SizeNote(value);
  return out;
}

std::string Quoted(std::string_view value, size_t max_chars) {
  bool cut = false;
  std::string out = "'" + EscapedPrefix(value, max_chars, &cut);
  if (cut) return out + kEllipsis + "'" + SizeNote(value);
  return out + "'";
}

ErrorDetail DetailOf(const absl::Status& status) {
  ErrorDetail detail;
  if (auto reason = IntPayload(status, kReasonUrl)) detail.reason = static_cast<ErrorReason>(*reason);
  if (auto param = status.GetPayload(kParamUrl)) detail.param = std::string(*param);
  if (auto code = status.GetPayload(kCodeUrl)) {
    detail.code = std::string(*code);
  } else {
    detail.code = std::string(DefaultCode(status.code()));
  }
  detail.retry_after_seconds = IntPayload(status, kRetryAfterUrl);
  return detail;
}

}  // namespace voxserve::core
