#include "client/client_error.h"

#include "absl/strings/cord.h"
#include "nlohmann/json.hpp"

namespace voxserve::client {
namespace {

constexpr char kPayloadUrl[] = "type.voxserve.dev/voxserve.client.ErrorInfo";

}  // namespace

std::string_view ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
      return "none";
    case ErrorKind::kInvalidOptions:
      return "invalid_options";
    case ErrorKind::kConnect:
      return "connect";
    case ErrorKind::kTls:
      return "tls";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kConnectionLost:
      return "connection_lost";
    case ErrorKind::kStreamBroken:
      return "stream_broken";
    case ErrorKind::kProtocol:
      return "protocol";
    case ErrorKind::kHttp:
      return "http";
    case ErrorKind::kCircuitOpen:
      return "circuit_open";
    case ErrorKind::kUnimplemented:
      return "unimplemented";
  }
  return "unknown";
}

absl::StatusCode StatusCodeForHttp(int http_status) {
  switch (http_status) {
    case 400:
    case 413:
    case 415:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 405:
    case 501:
      return absl::StatusCode::kUnimplemented;
    case 408:
    case 504:
      return absl::StatusCode::kDeadlineExceeded;
    case 409:
      return absl::StatusCode::kAborted;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    case 499:
      return absl::StatusCode::kCancelled;
    case 502:
    case 503:
      return absl::StatusCode::kUnavailable;
    default:
      break;
  }
  if (http_status >= 500) return absl::StatusCode::kInternal;
  if (http_status >= 400) return absl::StatusCode::kFailedPrecondition;
  return absl::StatusCode::kUnknown;
}

absl::Status MakeError(absl::StatusCode code, std::string_view message, const ErrorInfo& info) {
  absl::Status status(code, std::string(message));
  nlohmann::json payload = {{"kind", static_cast<int>(info.kind)},
                            {"http_status", info.http_status},
                            {"type", info.type},
                            {"code", info.code},
                            {"param", info.param},
                            {"endpoint", info.endpoint}};
  if (info.retry_after_seconds) payload["retry_after"] = *info.retry_after_seconds;
  status.SetPayload(kPayloadUrl, absl::Cord(payload.dump()));
  return status;
}

ErrorInfo ErrorInfoOf(const absl::Status& status) {
  ErrorInfo info;
  auto payload = status.GetPayload(kPayloadUrl);  // absl::optional in Debian's abseil
  if (!payload) return info;
  nlohmann::json json = nlohmann::json::parse(std::string(*payload), nullptr, false);
  if (!json.is_object()) return info;
  info.kind = static_cast<ErrorKind>(json.value("kind", 0));
  info.http_status = json.value("http_status", 0);
  info.type = json.value("type", "");
  info.code = json.value("code", "");
  info.param = json.value("param", "");
  info.endpoint = json.value("endpoint", "");
  if (json.contains("retry_after")) info.retry_after_seconds = json.value("retry_after", 0);
  return info;
}

}  // namespace voxserve::client
