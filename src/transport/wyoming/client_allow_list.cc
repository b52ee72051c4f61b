#include "transport/wyoming/client_allow_list.h"

#include "absl/strings/ascii.h"
#include "core/error.h"

namespace voxserve::transport::wyoming {
namespace net = boost::asio::ip;

absl::StatusOr<ClientAllowList> ClientAllowList::Parse(const std::vector<std::string>& entries) {
  ClientAllowList list;
  for (const std::string& raw : entries) {
    const std::string entry(absl::StripAsciiWhitespace(raw));
    if (entry.empty()) continue;
    boost::system::error_code ec;
    if (entry.find('/') != std::string::npos) {
      net::network_v4 v4 = net::make_network_v4(entry, ec);
      if (!ec) {
        list.v4_.push_back(v4);
        continue;
      }
      net::network_v6 v6 = net::make_network_v6(entry, ec);
      if (!ec) {
        list.v6_.push_back(v6);
        continue;
      }
    } else {
      net::address address = net::make_address(entry, ec);
      if (!ec && address.is_v4()) {
        list.v4_.emplace_back(address.to_v4(), 32);
        continue;
      }
      if (!ec) {
        list.v6_.emplace_back(address.to_v6(), 128);
        continue;
      }
    }
    return core::InvalidArgument("wyoming.allow: '" + entry +
                                 "' is not an IP address or a network like 192.168.1.0/24");
  }
  return list;
}

bool ClientAllowList::Allows(const net::address& client) const {
  if (empty()) return true;
  net::address address = client;
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = net::make_address_v4(net::v4_mapped, address.to_v6());
  }
  if (address.is_v4()) {
    for (const net::network_v4& network : v4_) {
      if (net::network_v4(address.to_v4(), network.prefix_length()).network() ==
          network.network()) {
        return true;
      }
    }
    return false;
  }
  for (const net::network_v6& network : v6_) {
    if (net::network_v6(address.to_v6(), network.prefix_length()).network() == network.network()) {
      return true;
    }
  }
  return false;
}

}  // namespace voxserve::transport::wyoming
