#include "transport/auth/key_limiter.h"

#include <gtest/gtest.h>

namespace voxserve::transport::auth {
namespace {

using std::chrono::milliseconds;

class KeyLimiterTest : public ::testing::Test {
 protected:
  bool Acquire(LimiterClock::time_point at) {
    return limiter_.TryAcquire(at, &retry_after_, &concurrency_);
  }

  KeyLimiter limiter_;
  LimiterClock::time_point t0_ = LimiterClock::now();
  int retry_after_ = 0;
  bool concurrency_ = false;
};

TEST_F(KeyLimiterTest, WithoutLimitsEverythingPasses) {
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(Acquire(t0_));
  EXPECT_EQ(limiter_.in_flight(), 1000);
}

TEST_F(KeyLimiterTest, BurstThenRefusalWithRetryAfterThenRefill) {
  limiter_.Configure(RateLimit{2, 3}, std::nullopt);  // 2/s, bursts of 3
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(Acquire(t0_)) << i;
    limiter_.Release();
  }
  EXPECT_FALSE(Acquire(t0_));
  EXPECT_FALSE(concurrency_);
  EXPECT_EQ(retry_after_, 1);                     // half a second, rounded up
  EXPECT_TRUE(Acquire(t0_ + milliseconds(500)));  // one token back
  limiter_.Release();
  EXPECT_FALSE(Acquire(t0_ + milliseconds(600)));
}

TEST_F(KeyLimiterTest, RetryAfterReflectsASlowRate) {
  limiter_.Configure(RateLimit{0.1, 1}, std::nullopt);  // one request per 10 s
  ASSERT_TRUE(Acquire(t0_));
  EXPECT_FALSE(Acquire(t0_ + milliseconds(1000)));
  EXPECT_NEAR(retry_after_, 9, 1);  // 0.9 of a token at 0.1/s
}

TEST_F(KeyLimiterTest, ConcurrencyCapFreesOnRelease) {
  limiter_.Configure(std::nullopt, 2);
  ASSERT_TRUE(Acquire(t0_));
  ASSERT_TRUE(Acquire(t0_));
  EXPECT_FALSE(Acquire(t0_));
  EXPECT_TRUE(concurrency_);
  EXPECT_EQ(retry_after_, 1);
  limiter_.Release();
  EXPECT_TRUE(Acquire(t0_));
}

TEST_F(KeyLimiterTest, RefusedByConcurrencyCostsNoToken) {
  limiter_.Configure(RateLimit{1, 1}, 1);
  ASSERT_TRUE(Acquire(t0_));
  EXPECT_FALSE(Acquire(t0_ + milliseconds(2000)));  // slot busy, bucket refilled meanwhile
  EXPECT_TRUE(concurrency_);
  limiter_.Release();
  EXPECT_TRUE(Acquire(t0_ + milliseconds(2000)));
}

TEST_F(KeyLimiterTest, AdmissionReleasesOnceWhenDestroyedOrMoved) {
  auto limiter = std::make_shared<KeyLimiter>();
  limiter->Configure(std::nullopt, 1);
  ASSERT_TRUE(limiter->TryAcquire(t0_, &retry_after_, &concurrency_));
  {
    Admission first(limiter);
    Admission second = std::move(first);
    Admission third;
    third = std::move(second);
    EXPECT_EQ(limiter->in_flight(), 1);
  }
  EXPECT_EQ(limiter->in_flight(), 0);
}

TEST_F(KeyLimiterTest, LoweringTheBurstOnReloadCapsSavedTokens) {
  limiter_.Configure(RateLimit{1, 10}, std::nullopt);
  ASSERT_TRUE(Acquire(t0_));  // starts a full bucket: 9 left
  limiter_.Configure(RateLimit{1, 2}, std::nullopt);
  EXPECT_TRUE(Acquire(t0_));
  EXPECT_TRUE(Acquire(t0_));
  EXPECT_FALSE(Acquire(t0_));
}

}  // namespace
}  // namespace voxserve::transport::auth
