// What went wrong in a call, in more detail than the absl::Status code: the kind of failure, the
// HTTP status and the server's OpenAI-style error fields. Attached to every error the Client
// returns; read it back with ErrorInfoOf().
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace voxserve::client {

enum class ErrorKind {
  kNone,
  kInvalidOptions,  // the call or the client was misconfigured (nothing was sent)
  kConnect,         // DNS, TCP connect or its timeout: the request never left (retried)
  kTls,             // TLS handshake or certificate verification failed
  kTimeout,         // the attempt or the whole call ran out of time
  kConnectionLost,  // the server closed or reset the connection before answering (retried)
  kStreamBroken,    // the connection broke, or the server sent an error, after audio had started
  kProtocol,        // the answer was not valid HTTP, JSON or SSE
  kHttp,            // the server answered with an error status (see http_status)
  kCircuitOpen,     // every endpoint's circuit breaker is open: failed fast, nothing was sent
  kUnimplemented,   // a transport or call that this build does not have
};

std::string_view ErrorKindName(ErrorKind kind);  // "connect", "http", ...

struct ErrorInfo {
  ErrorKind kind = ErrorKind::kNone;
  int http_status = 0;                     // 0 when the server did not answer
  std::string type, code, param;           // the server's {"error": {...}} fields, when sent
  std::optional<int> retry_after_seconds;  // from a Retry-After header
  std::string endpoint;                    // the endpoint of the last attempt
};

// kNone for OK or for a status that did not come from a Client.
ErrorInfo ErrorInfoOf(const absl::Status& status);

// The absl code for an HTTP error status (400 → kInvalidArgument, 429 → kResourceExhausted,
// 503 → kUnavailable, 504 → kDeadlineExceeded, ...), the same mapping gRPC uses.
absl::StatusCode StatusCodeForHttp(int http_status);

// An error status carrying `info`.
absl::Status MakeError(absl::StatusCode code, std::string_view message, const ErrorInfo& info);

}  // namespace voxserve::client
