// The open connections of a TCP front end (transport/tcp/connection_set.h): the limit, the drain
// (of those open, and of those added after), and the wait for all to close.
#include "transport/tcp/connection_set.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace voxserve::transport::tcp {
namespace {

// Records what the set did to it, and tells the set when it is destroyed, as connections do.
struct FakeConnection {
  FakeConnection(std::vector<std::string>& log, ConnectionSet<FakeConnection>& set)
      : log(log), set(set) {}
  ~FakeConnection() { set.Closed(); }
  void Start() { log.push_back("start"); }
  void Drain() { log.push_back("drain"); }
  std::vector<std::string>& log;
  ConnectionSet<FakeConnection>& set;
};

TEST(ConnectionSetTest, RefusesPastTheLimitWithoutMakingAConnection) {
  std::vector<std::string> log;
  ConnectionSet<FakeConnection> set;
  auto make = [&] { return std::make_shared<FakeConnection>(log, set); };
  auto first = set.Add(make, 2);
  auto second = set.Add(make, 2);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  bool made = false;
  auto third = set.Add(
      [&] {
        made = true;
        return make();
      },
      2);
  EXPECT_EQ(third, nullptr);
  EXPECT_FALSE(made);
  EXPECT_EQ(set.open(), 2u);
  second.reset();  // a closed connection frees its place
  EXPECT_EQ(set.open(), 1u);
  EXPECT_NE(set.Add(make, 2), nullptr);
}

TEST(ConnectionSetTest, DrainsThoseOpenAndEveryOneAddedAfterOnceStarted) {
  std::vector<std::string> log;
  ConnectionSet<FakeConnection> set;
  auto make = [&] { return std::make_shared<FakeConnection>(log, set); };
  auto open = set.Add(make);
  EXPECT_TRUE(set.Drain());
  EXPECT_FALSE(set.Drain());  // once
  auto late = set.Add(make);
  EXPECT_EQ(log, (std::vector<std::string>{"start", "drain", "start", "drain"}));
  EXPECT_EQ(set.Live().size(), 2u);
}

TEST(ConnectionSetTest, WaitClosedReturnsOnceEveryConnectionIsDestroyed) {
  std::vector<std::string> log;
  ConnectionSet<FakeConnection> set;
  EXPECT_TRUE(set.WaitClosed(std::chrono::milliseconds(0)));
  auto connection = set.Add([&] { return std::make_shared<FakeConnection>(log, set); });
  EXPECT_FALSE(set.WaitClosed(std::chrono::milliseconds(1)));
  connection.reset();
  EXPECT_TRUE(set.WaitClosed(std::chrono::milliseconds(0)));
}

}  // namespace
}  // namespace voxserve::transport::tcp
