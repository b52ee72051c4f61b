#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "transport/wyoming/client_allow_list.h"
#include "transport/wyoming/wyoming_config.h"

namespace voxserve::transport::wyoming {
namespace {

namespace net = boost::asio::ip;

TEST(ClientAllowListTest, EmptyAllowsEveryone) {
  auto list = ClientAllowList::Parse({});
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->Allows(net::make_address("203.0.113.9")));
  EXPECT_TRUE(list->Allows(net::make_address("::1")));
}

TEST(ClientAllowListTest, AddressesAndNetworksOfBothFamilies) {
  auto list = ClientAllowList::Parse({" 127.0.0.1", "192.168.1.0/24 ", "fd00::/8", "::1"});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_TRUE(list->Allows(net::make_address("127.0.0.1")));
  EXPECT_FALSE(list->Allows(net::make_address("127.0.0.2")));
  EXPECT_TRUE(list->Allows(net::make_address("192.168.1.200")));
  EXPECT_FALSE(list->Allows(net::make_address("192.168.2.1")));
  EXPECT_TRUE(list->Allows(net::make_address("fd12:3456::1")));
  EXPECT_FALSE(list->Allows(net::make_address("fe80::1")));
  EXPECT_TRUE(list->Allows(net::make_address("::1")));
  // An IPv4 client of a dual-stack socket.
  EXPECT_TRUE(list->Allows(net::make_address("::ffff:192.168.1.7")));
  EXPECT_FALSE(list->Allows(net::make_address("::ffff:10.0.0.1")));
}

TEST(ClientAllowListTest, AnEntryThatIsNoAddressIsNamed) {
  for (const char* bad : {"localhost", "10.0.0.0/33", "192.168.1", "fd00::/129"}) {
    auto list = ClientAllowList::Parse({"127.0.0.1", bad});
    ASSERT_FALSE(list.ok()) << bad;
    EXPECT_THAT(std::string(list.status().message()), ::testing::HasSubstr(bad));
  }
}

TEST(WyomingConfigTest, ValidatesItsRanges) {
  WyomingConfig config;
  EXPECT_TRUE(config.Validate().ok());
  EXPECT_FALSE(config.enabled) << "off unless asked for";
  EXPECT_EQ(config.port, 10200);
  config.max_connections = 0;
  EXPECT_THAT(std::string(config.Validate().message()), ::testing::HasSubstr("max_connections"));
  config = {};
  config.allow = {"not-an-address"};
  EXPECT_THAT(std::string(config.Validate().message()), ::testing::HasSubstr("wyoming.allow"));
}

}  // namespace
}  // namespace voxserve::transport::wyoming
