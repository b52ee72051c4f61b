// One API key's limits at run time: a token bucket (requests per second with a burst) and a cap
// on requests running at once. Survives key reloads, so a SIGHUP neither refills the bucket nor
// forgets requests in flight.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>

#include "absl/status/status.h"
#include "transport/auth/api_keys_file.h"

namespace voxserve::transport::auth {

using LimiterClock = std::chrono::steady_clock;

// Safe cross thread.
class KeyLimiter {
 public:
  void Configure(std::optional<RateLimit> rate_limit, std::optional<int> max_concurrent);

  // Takes a token and a concurrency slot, or neither. On refusal *retry_after_seconds says when a
  // retry can succeed (at least 1) and *concurrency tells which limit refused.
  bool TryAcquire(LimiterClock::time_point now, int* retry_after_seconds, bool* concurrency);
  void Release();
  int in_flight() const;

 private:
  mutable std::mutex mutex_;
  std::optional<RateLimit> rate_limit_;
  std::optional<int> max_concurrent_;
  double tokens_ = -1;  // < 0: not started; the first request finds a full bucket
  LimiterClock::time_point refilled_at_{};
  int in_flight_ = 0;
};

// Holds one concurrency slot of a key until destroyed; empty when the key has no limits or auth
// is off. Move-only; safe to destroy on any thread.
class Admission {
 public:
  Admission() = default;
  explicit Admission(std::shared_ptr<KeyLimiter> limiter) : limiter_(std::move(limiter)) {}
  Admission(Admission&& other) noexcept = default;
  Admission& operator=(Admission&& other) noexcept;
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;
  ~Admission() { Reset(); }

  void Reset();

 private:
  std::shared_ptr<KeyLimiter> limiter_;
};

}  // namespace voxserve::transport::auth
