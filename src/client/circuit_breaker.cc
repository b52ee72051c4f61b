#include "client/circuit_breaker.h"

#include <algorithm>

namespace voxserve::client {

CircuitBreaker::CircuitBreaker(CircuitBreakerOptions options,
                               std::function<Clock::time_point()> now)
    : options_(options), now_(std::move(now)) {}

int64_t CircuitBreaker::SliceOf(Clock::time_point time) const {
  auto slice = std::max<int64_t>(1, options_.window.count() * 1'000'000 / kBuckets);  // ns
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count() /
         slice;
}

void CircuitBreaker::ResetWindow() { buckets_.fill(Bucket{}); }

void CircuitBreaker::MaybeHalfOpen(Clock::time_point now) const {
  if (state_ == BreakerState::kOpen && now - opened_at_ >= options_.open_for) {
    state_ = BreakerState::kHalfOpen;
    probes_in_flight_ = 0;
    probes_succeeded_ = 0;
  }
}

bool CircuitBreaker::TryAcquire() {
  if (!options_.enabled) return true;
  std::lock_guard lock(mutex_);
  MaybeHalfOpen(now_());
  switch (state_) {
    case BreakerState::kClosed:
      return true;
    case BreakerState::kOpen:
      return false;
    case BreakerState::kHalfOpen:
      if (probes_in_flight_ + probes_succeeded_ >= options_.half_open_probes) return false;
      ++probes_in_flight_;
      return true;
  }
  return false;
}

void CircuitBreaker::Release() {
  if (!options_.enabled) return;
  std::lock_guard lock(mutex_);
  if (state_ == BreakerState::kHalfOpen && probes_in_flight_ > 0) --probes_in_flight_;
}

void CircuitBreaker::Record(bool failure) {
  if (!options_.enabled) return;
  std::lock_guard lock(mutex_);
  Clock::time_point now = now_();
  if (state_ == BreakerState::kHalfOpen) {
    if (probes_in_flight_ > 0) --probes_in_flight_;
    if (failure) {
      state_ = BreakerState::kOpen;
      opened_at_ = now;
    } else if (++probes_succeeded_ >= options_.half_open_probes) {
      state_ = BreakerState::kClosed;
      ResetWindow();
    }
    return;
  }
  if (state_ == BreakerState::kOpen) return;  // a call admitted before the breaker opened
  int64_t slice = SliceOf(now);
  Bucket& bucket = buckets_[static_cast<size_t>(slice % kBuckets)];
  if (bucket.slice != slice) bucket = Bucket{slice, 0, 0};
  ++bucket.calls;
  if (failure) ++bucket.failures;
  int calls = 0, failures = 0;
  for (const Bucket& b : buckets_) {
    if (b.slice > slice - kBuckets) {
      calls += b.calls;
      failures += b.failures;
    }
  }
  if (calls >= options_.min_calls &&
      failures >= options_.failure_rate * static_cast<double>(calls)) {
    state_ = BreakerState::kOpen;
    opened_at_ = now;
    ResetWindow();
  }
}

BreakerState CircuitBreaker::state() const {
  if (!options_.enabled) return BreakerState::kClosed;
  std::lock_guard lock(mutex_);
  MaybeHalfOpen(now_());
  return state_;
}

}  // namespace voxserve::client
