// http.max_connections against RLIMIT_NOFILE: kept when it fits, lowered with a warning when it
// does not, refused when the limit leaves almost nothing.
#include "server/open_file_limit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

namespace voxserve::server {
namespace {

TEST(FitConnectionsToFileLimit, KeepsTheConfiguredValueWhenItFitsWithTheReserve) {
  auto budget = FitConnectionsToFileLimit(10'000, 10'256, 256);
  ASSERT_TRUE(budget.ok()) << budget.status();
  EXPECT_EQ(budget->max_connections, 10'000u);
  EXPECT_TRUE(budget->warning.empty());
}

TEST(FitConnectionsToFileLimit, LowersToWhatTheLimitLeavesAndSaysHowToRaiseIt) {
  auto budget = FitConnectionsToFileLimit(10'000, 1024, 256);
  ASSERT_TRUE(budget.ok()) << budget.status();
  EXPECT_EQ(budget->max_connections, 768u);
  EXPECT_NE(budget->warning.find("http.max_connections 10000"), std::string::npos)
      << budget->warning;
  EXPECT_NE(budget->warning.find("RLIMIT_NOFILE 1024"), std::string::npos) << budget->warning;
  EXPECT_NE(budget->warning.find("ulimit"), std::string::npos) << budget->warning;
}

TEST(FitConnectionsToFileLimit, RefusesALimitThatLeavesAlmostNoConnections) {
  EXPECT_FALSE(FitConnectionsToFileLimit(100, 256 + kMinimumConnections - 1, 256).ok());
  EXPECT_FALSE(FitConnectionsToFileLimit(100, 64, 256).ok());
  auto just_enough = FitConnectionsToFileLimit(100, 256 + kMinimumConnections, 256);
  ASSERT_TRUE(just_enough.ok()) << just_enough.status();
  EXPECT_EQ(just_enough->max_connections, kMinimumConnections);
}

TEST(RaiseOpenFileLimit, LeavesTheSoftLimitAtTheHardLimit) {
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &before), 0);
  auto limit = RaiseOpenFileLimit();
  ASSERT_TRUE(limit.ok()) << limit.status();
  EXPECT_EQ(limit->soft_before, before.rlim_cur);
  EXPECT_EQ(limit->soft, limit->hard);
  rlimit after{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &after), 0);
  EXPECT_EQ(after.rlim_cur, limit->soft);
}

}  // namespace
}  // namespace voxserve::server
