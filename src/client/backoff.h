// When to retry: which outcomes are safe to retry, and how long to sleep before the next attempt.
#pragma once

#include <chrono>
#include <optional>
#include <random>

#include "client/client_error.h"
#include "client/client_options.h"

namespace voxserve::client {

// The sleep before retry `retry` (1 = the first retry): full jitter, uniform in [0, cap] with
// cap = min(max_backoff, initial_backoff × multiplier^(retry-1)); exactly cap without jitter.
std::chrono::nanoseconds BackoffBefore(const RetryPolicy& policy, int retry, std::mt19937_64& rng);

// Safe to retry: the request never reached an engine, or the server asked to be called again.
// Connect errors, a connection closed before any answer (a stale keep-alive connection; synthesis
// has no side effects), and HTTP 429, 502, 503, 504. Never another 4xx, never a timeout of an
// attempt that was sent (the server may still be working on it), never after audio reached the
// caller (`delivered`).
bool IsRetryable(ErrorKind kind, int http_status, bool delivered);

// Whether an attempt counts against its endpoint's circuit breaker: the endpoint looked unhealthy
// (could not connect, timed out, broke the connection, answered 5xx).
bool CountsAsBreakerFailure(ErrorKind kind, int http_status);

}  // namespace voxserve::client
