// One endpoint's circuit breaker (see CircuitBreakerOptions): closed → open on a failure rate over
// a sliding window, open → half-open after a pause, half-open → closed when its probes succeed.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <mutex>

#include "client/client.h"
#include "client/client_options.h"

namespace voxserve::client {

// Safe cross thread (one mutex; every call is a few arithmetic steps under it).
class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  // `now` is injectable for tests.
  explicit CircuitBreaker(CircuitBreakerOptions options,
                          std::function<Clock::time_point()> now = Clock::now);

  // Whether a call may go to this endpoint now. In half-open, true reserves one probe; every
  // true must be followed by exactly one Record() or Release().
  bool TryAcquire();
  // The call's outcome.
  void Record(bool failure);
  // The call ended without saying anything about the endpoint (e.g. the caller's own timeout
  // while waiting for a pooled connection).
  void Release();

  BreakerState state() const;

 private:
  // The window is kBuckets slices; old slices are cleared as time moves on. Fixed memory.
  static constexpr int kBuckets = 10;
  struct Bucket {
    int64_t slice = -1;
    int calls = 0;
    int failures = 0;
  };

  int64_t SliceOf(Clock::time_point time) const;
  void ResetWindow();
  void MaybeHalfOpen(Clock::time_point now) const;  // open → half-open once open_for passed

  const CircuitBreakerOptions options_;
  const std::function<Clock::time_point()> now_;
  mutable std::mutex mutex_;
  mutable BreakerState state_ = BreakerState::kClosed;
  mutable Clock::time_point opened_at_;
  mutable int probes_in_flight_ = 0;
  mutable int probes_succeeded_ = 0;
  std::array<Bucket, kBuckets> buckets_{};
};

}  // namespace voxserve::client
