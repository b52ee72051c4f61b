// Settings of the Wyoming listener (YAML: wyoming.*), each with the reason for its default.
// Wyoming has no authentication: docs/wyoming.md says how to protect the port.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace voxserve::transport::wyoming {

struct WyomingConfig {
  // Off unless asked for: the port takes requests from anyone who can reach it.
  bool enabled = false;
  std::string host;  // empty = the HTTP listener's host (http.host, loopback by default)
  // 10200 is the port Home Assistant's Wyoming add-ons use for TTS (wyoming-piper's default).
  int port = 10200;
  // Home Assistant opens one connection per request and closes it; a satellite keeps one open.
  // Far more than one home needs, far less than the descriptors a flood could take.
  size_t max_connections = 64;
  // A connection with no event from the client and nothing being synthesized this long is
  // closed. Home Assistant connects per request, so an idle connection is a stuck client.
  int idle_timeout_ms = 300'000;
  // Client addresses or CIDR networks served (ClientAllowList); empty: any client.
  std::vector<std::string> allow;
  // Announce the listener over mDNS (`_wyoming._tcp`) so Home Assistant discovers it; only
  // where others can reach it (not on a loopback address).
  bool zeroconf = true;
  std::string zeroconf_name = "voxserve";  // the name Home Assistant shows

  absl::Status Validate() const;
};

}  // namespace voxserve::transport::wyoming
