#include "client/backoff.h"

#include <gtest/gtest.h>

namespace voxserve::client {
namespace {

using std::chrono::milliseconds;

RetryPolicy Policy(bool jitter) {
  RetryPolicy policy;
  policy.initial_backoff = milliseconds(100);
  policy.max_backoff = milliseconds(1000);
  policy.multiplier = 2.0;
  policy.jitter = jitter;
  return policy;
}

TEST(BackoffTest, WithoutJitterDoublesUpToTheCap) {
  std::mt19937_64 rng(1);
  std::vector<int64_t> expected = {100, 200, 400, 800, 1000, 1000};
  for (int retry = 1; retry <= 6; ++retry) {
    auto pause = std::chrono::duration_cast<milliseconds>(BackoffBefore(Policy(false), retry, rng));
    EXPECT_EQ(pause.count(), expected[static_cast<size_t>(retry - 1)]) << "retry " << retry;
  }
}

TEST(BackoffTest, FullJitterStaysWithinZeroAndTheCapAndSpreadsOut) {
  std::mt19937_64 rng(42);
  for (int retry = 1; retry <= 5; ++retry) {
    double cap = std::min(1000.0, 100.0 * (1 << (retry - 1)));
    double low = cap, high = 0, sum = 0;
    for (int i = 0; i < 2000; ++i) {
      double ms = std::chrono::duration<double, std::milli>(BackoffBefore(Policy(true), retry, rng))
                      .count();
      ASSERT_GE(ms, 0);
      ASSERT_LE(ms, cap);
      low = std::min(low, ms);
      high = std::max(high, ms);
      sum += ms;
    }
    EXPECT_LT(low, cap * 0.05);
    EXPECT_GT(high, cap * 0.95);
    EXPECT_NEAR(sum / 2000, cap / 2, cap * 0.05);  // uniform: mean is half the cap
  }
}

TEST(BackoffTest, RetriesOnlyWhatIsSafe) {
  EXPECT_TRUE(IsRetryable(ErrorKind::kConnect, 0, false));
  EXPECT_TRUE(IsRetryable(ErrorKind::kConnectionLost, 0, false));
  for (int status : {429, 502, 503, 504}) EXPECT_TRUE(IsRetryable(ErrorKind::kHttp, status, false));
  for (int status : {400, 401, 403, 404, 413, 500, 501}) {
    EXPECT_FALSE(IsRetryable(ErrorKind::kHttp, status, false)) << status;
  }
  EXPECT_FALSE(IsRetryable(ErrorKind::kTimeout, 0, false));
  EXPECT_FALSE(IsRetryable(ErrorKind::kTls, 0, false));
  EXPECT_FALSE(IsRetryable(ErrorKind::kHttp, 503, true));  // audio already delivered
  EXPECT_FALSE(IsRetryable(ErrorKind::kConnectionLost, 0, true));
}

TEST(BackoffTest, BreakerCountsUnhealthyAnswersOnly) {
  EXPECT_TRUE(CountsAsBreakerFailure(ErrorKind::kConnect, 0));
  EXPECT_TRUE(CountsAsBreakerFailure(ErrorKind::kTimeout, 0));
  EXPECT_TRUE(CountsAsBreakerFailure(ErrorKind::kHttp, 503));
  EXPECT_TRUE(CountsAsBreakerFailure(ErrorKind::kHttp, 500));
  EXPECT_FALSE(CountsAsBreakerFailure(ErrorKind::kHttp, 429));
  EXPECT_FALSE(CountsAsBreakerFailure(ErrorKind::kHttp, 400));
  EXPECT_FALSE(CountsAsBreakerFailure(ErrorKind::kNone, 200));
}

}  // namespace
}  // namespace voxserve::client
