#include "client/circuit_breaker.h"

#include <gtest/gtest.h>

namespace voxserve::client {
namespace {

using std::chrono::milliseconds;

class CircuitBreakerTest : public ::testing::Test {
 protected:
  CircuitBreakerOptions Options() {
    CircuitBreakerOptions options;
    options.window = milliseconds(1000);
    options.min_calls = 4;
    options.failure_rate = 0.5;
    options.open_for = milliseconds(500);
    options.half_open_probes = 2;
    return options;
  }
  CircuitBreaker Make() {
    return CircuitBreaker(Options(), [this] { return now_; });
  }
  void Call(CircuitBreaker& breaker, bool failure) {
    ASSERT_TRUE(breaker.TryAcquire());
    breaker.Record(failure);
  }
  CircuitBreaker::Clock::time_point now_ = CircuitBreaker::Clock::time_point(std::chrono::hours(1));
};

TEST_F(CircuitBreakerTest, StaysClosedBelowMinCalls) {
  CircuitBreaker breaker = Make();
  for (int i = 0; i < 3; ++i) Call(breaker, true);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
}

TEST_F(CircuitBreakerTest, OpensAtTheFailureRateAndRejects) {
  CircuitBreaker breaker = Make();
  Call(breaker, false);
  Call(breaker, false);
  Call(breaker, true);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);  // 1 of 3, below min_calls anyway
  Call(breaker, true);                                // 2 of 4 = 0.5
  EXPECT_EQ(breaker.state(), BreakerState::kOpen);
  EXPECT_FALSE(breaker.TryAcquire());
}

TEST_F(CircuitBreakerTest, ForgetsFailuresOlderThanTheWindow) {
  CircuitBreaker breaker = Make();
  Call(breaker, true);
  Call(breaker, true);
  Call(breaker, true);
  now_ += milliseconds(1500);
  Call(breaker, true);  // only this one is in the window
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
}

TEST_F(CircuitBreakerTest, HalfOpensAfterOpenForAndClosesWhenEveryProbeSucceeds) {
  CircuitBreaker breaker = Make();
  for (int i = 0; i < 4; ++i) Call(breaker, true);
  now_ += milliseconds(499);
  EXPECT_EQ(breaker.state(), BreakerState::kOpen);
  now_ += milliseconds(1);
  EXPECT_EQ(breaker.state(), BreakerState::kHalfOpen);
  ASSERT_TRUE(breaker.TryAcquire());
  ASSERT_TRUE(breaker.TryAcquire());
  EXPECT_FALSE(breaker.TryAcquire());  // two probes at most
  breaker.Record(false);
  EXPECT_EQ(breaker.state(), BreakerState::kHalfOpen);
  breaker.Record(false);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
  // The old failures are gone: one more failure does not reopen it.
  Call(breaker, true);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
}

TEST_F(CircuitBreakerTest, AFailedProbeReopens) {
  CircuitBreaker breaker = Make();
  for (int i = 0; i < 4; ++i) Call(breaker, true);
  now_ += milliseconds(500);
  ASSERT_TRUE(breaker.TryAcquire());
  breaker.Record(true);
  EXPECT_EQ(breaker.state(), BreakerState::kOpen);
  now_ += milliseconds(499);
  EXPECT_FALSE(breaker.TryAcquire());
}

TEST_F(CircuitBreakerTest, AReleasedProbeFreesItsSlot) {
  CircuitBreakerOptions options = Options();
  options.half_open_probes = 1;
  CircuitBreaker breaker(options, [this] { return now_; });
  for (int i = 0; i < 4; ++i) Call(breaker, true);
  now_ += milliseconds(500);
  ASSERT_TRUE(breaker.TryAcquire());
  EXPECT_FALSE(breaker.TryAcquire());
  breaker.Release();
  EXPECT_TRUE(breaker.TryAcquire());
}

TEST_F(CircuitBreakerTest, DisabledAlwaysAllows) {
  CircuitBreakerOptions options = Options();
  options.enabled = false;
  CircuitBreaker breaker(options, [this] { return now_; });
  for (int i = 0; i < 10; ++i) Call(breaker, true);
  EXPECT_EQ(breaker.state(), BreakerState::kClosed);
}

}  // namespace
}  // namespace voxserve::client
