// Errors with the detail clients need (which parameter, a machine-readable code, why), carried on
// absl::Status so every fallible call returns one type. Transports turn them into HTTP or gRPC
// answers in exactly one place each (transport/http/error_response.cc for HTTP).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace voxserve::core {

// Refines the absl code where HTTP tells apart cases that share one gRPC code.
enum class ErrorReason {
  kUnspecified,
  kPayloadTooLarge,       // body or input over a configured limit (HTTP 413)
  kUnsupportedMediaType,  // body is not JSON (HTTP 415)
  kMethodNotAllowed,      // route exists, method does not (HTTP 405)
  kQueueFull,             // admission control rejected the request (HTTP 429)
  kDraining,              // server is shutting down (HTTP 503)
  kInsufficientStorage,   // a store the request would add to is full (HTTP 507)
  kOutputTooLong,         // the audio passed its configured bound (HTTP 413, WebSocket 1008)
};

struct ErrorDetail {
  ErrorReason reason = ErrorReason::kUnspecified;
  std::string param;  // the request field at fault, e.g. "voice"; empty when none
  // Machine-readable code, e.g. "voice_not_found": the one attached, else DefaultCode's for the
  // status code, so every error a client sees has one. Empty only for OK.
  std::string code;
  std::optional<int> retry_after_seconds;
};

// The code of an error that was given none, from its absl code alone ("invalid_request",
// "not_found", "already_exists", "timeout", "internal_error", ...); "" for OK.
std::string_view DefaultCode(absl::StatusCode code);

// Client input to echo in an error message, bounded: `value` in single quotes, cut after
// `max_chars` code points with "…" and its full size in bytes, control characters as \xNN.
// Every message that repeats what a client sent goes through it, so a 900 KB `voice` never
// comes back as a 900 KB error.
std::string Quoted(std::string_view value, size_t max_chars = 64);
// The same without the quotes, for a longer text that holds client input (a JSON parser's
// message that repeats what it last read).
std::string Truncated(std::string_view value, size_t max_chars);

absl::Status InvalidArgument(std::string_view message, std::string_view param = {},
                             std::string_view code = {});
absl::Status NotFound(std::string_view message, std::string_view param = {},
                      std::string_view code = {});
absl::Status PayloadTooLarge(std::string_view message, std::string_view param = {});
// The audio passed limits.max_audio_seconds (or the stream's bound): 413 `output_too_long`.
absl::Status OutputTooLong(std::string_view message);
absl::Status AlreadyExists(std::string_view message, std::string_view param, std::string_view code);
// Any status code with a param and a code, for the cases the constructors here do not name.
absl::Status MakeError(absl::StatusCode status_code, std::string_view message,
                       std::string_view param, std::string_view code);
absl::Status UnsupportedMediaType(std::string_view message);
absl::Status MethodNotAllowed(std::string_view message);
absl::Status QueueFull(std::string_view message, int retry_after_seconds);
absl::Status Draining(std::string_view message);
// 503 + Retry-After: the engine instance (a worker process) running the work was lost; retrying
// is safe and usually lands on a live instance at once.
absl::Status InstanceLost(std::string_view message, int retry_after_seconds);
// 401: no credentials or wrong ones. 403: the caller is known but may not do this.
// 503 + Retry-After, code "voice_store_unavailable" (or `code`: "dictionary_store_unavailable"):
// the shared registry (PostgreSQL) cannot be reached; nothing was changed and the server
// reconnects on its own.
absl::Status StoreUnavailable(std::string_view message, int retry_after_seconds,
                              std::string_view code = "voice_store_unavailable");
absl::Status Unauthenticated(std::string_view message, std::string_view code);
absl::Status PermissionDenied(std::string_view message, std::string_view param,
                              std::string_view code);
// 429 for a caller over its own limits (rate or concurrency), not the server's queue.
absl::Status RateLimited(std::string_view message, std::string_view code, int retry_after_seconds);
absl::Status Internal(std::string_view message);
// 507 (RFC 4918 11.5) / RESOURCE_EXHAUSTED: the request is fine but a bounded store (the voices
// directory) has no room for what it would add; retrying helps only once something is deleted.
absl::Status InsufficientStorage(std::string_view message, std::string_view code);

// Tags an error with the model it concerns (a configured model id, so a bounded metrics label),
// for errors raised where the model was resolved but the caller only sees the status.
absl::Status WithModel(absl::Status status, std::string_view model_id);
std::string ModelOf(const absl::Status& status);  // empty when untagged

// Reads back what the constructors above attached; defaults for a plain absl::Status.
ErrorDetail DetailOf(const absl::Status& status);

}  // namespace voxserve::core
