#include "transport/auth/key_limiter.h"

#include <algorithm>
#include <cmath>

namespace voxserve::transport::auth {

void KeyLimiter::Configure(std::optional<RateLimit> rate_limit, std::optional<int> max_concurrent) {
  std::lock_guard lock(mutex_);
  rate_limit_ = rate_limit;
  max_concurrent_ = max_concurrent;
  if (rate_limit_ && tokens_ > rate_limit_->burst) tokens_ = rate_limit_->burst;
}

bool KeyLimiter::TryAcquire(LimiterClock::time_point now, int* retry_after_seconds,
                            bool* concurrency) {
  std::lock_guard lock(mutex_);
  *concurrency = false;
  if (max_concurrent_ && in_flight_ >= *max_concurrent_) {
    *concurrency = true;
    *retry_after_seconds = 1;  // a slot frees when a running request ends; no better estimate
    return false;
  }
  if (rate_limit_) {
    const RateLimit& limit = *rate_limit_;
    if (tokens_ < 0) {
      tokens_ = limit.burst;
    } else {
      double elapsed = std::chrono::duration<double>(now - refilled_at_).count();
      tokens_ = std::min(limit.burst, tokens_ + std::max(0.0, elapsed) * limit.requests_per_second);
    }
    refilled_at_ = now;
    if (tokens_ < 1) {
      double wait = (1 - tokens_) / limit.requests_per_second;
      *retry_after_seconds = std::max(1, static_cast<int>(std::ceil(wait)));
      return false;
    }
    tokens_ -= 1;
  }
  ++in_flight_;
  return true;
}

void KeyLimiter::Release() {
  std::lock_guard lock(mutex_);
  if (in_flight_ > 0) --in_flight_;
}

int KeyLimiter::in_flight() const {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

Admission& Admission::operator=(Admission&& other) noexcept {
  if (this != &other) {
    Reset();
    limiter_ = std::move(other.limiter_);
  }
  return *this;
}

void Admission::Reset() {
  if (limiter_) limiter_->Release();
  limiter_.reset();
}

}  // namespace voxserve::transport::auth
