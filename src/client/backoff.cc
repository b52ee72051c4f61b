#include "client/backoff.h"

#include <algorithm>
#include <cmath>

namespace voxserve::client {

std::chrono::nanoseconds BackoffBefore(const RetryPolicy& policy, int retry, std::mt19937_64& rng) {
  double initial = std::chrono::duration<double>(policy.initial_backoff).count();
  double ceiling = std::chrono::duration<double>(policy.max_backoff).count();
  double cap = std::min(ceiling, initial * std::pow(policy.multiplier, std::max(0, retry - 1)));
  double seconds = cap;
  if (policy.jitter && cap > 0) seconds = std::uniform_real_distribution<double>(0.0, cap)(rng);
  return std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
}

bool IsRetryable(ErrorKind kind, int http_status, bool delivered) {
  if (delivered) return false;
  switch (kind) {
    case ErrorKind::kConnect:
    case ErrorKind::kConnectionLost:
      return true;
    case ErrorKind::kHttp:
      return http_status == 429 || http_status == 502 || http_status == 503 || http_status == 504;
    default:
      return false;
  }
}

bool CountsAsBreakerFailure(ErrorKind kind, int http_status) {
  switch (kind) {
    case ErrorKind::kConnect:
    case ErrorKind::kTls:
    case ErrorKind::kTimeout:
    case ErrorKind::kConnectionLost:
    case ErrorKind::kStreamBroken:
      return true;
    case ErrorKind::kHttp:
      return http_status >= 500;
    default:
      return false;
  }
}

}  // namespace voxserve::client
