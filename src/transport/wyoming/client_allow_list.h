// wyoming.allow: the client addresses the Wyoming listener serves. Wyoming has no credentials,
// so where the port is reachable by more than trusted hosts this list is its only gate (besides
// binding it to loopback or the LAN: docs/wyoming.md).
#pragma once

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/network_v4.hpp>
#include <boost/asio/ip/network_v6.hpp>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::transport::wyoming {

// Immutable after Parse; safe cross thread.
class ClientAllowList {
 public:
  // Entries are addresses ("192.168.1.20", "::1") or networks in CIDR form ("192.168.1.0/24",
  // "fd00::/8"), surrounding spaces ignored. None: every client is allowed. InvalidArgument
  // naming the entry otherwise.
  static absl::StatusOr<ClientAllowList> Parse(const std::vector<std::string>& entries);

  // IPv4 clients of a dual-stack socket (::ffff:a.b.c.d) match IPv4 entries.
  bool Allows(const boost::asio::ip::address& client) const;
  bool empty() const { return v4_.empty() && v6_.empty(); }

 private:
  std::vector<boost::asio::ip::network_v4> v4_;
  std::vector<boost::asio::ip::network_v6> v6_;
};

}  // namespace voxserve::transport::wyoming
