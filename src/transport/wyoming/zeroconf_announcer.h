// Announces the Wyoming listener over mDNS / DNS-SD as `_wyoming._tcp` (what Home Assistant's
// Wyoming integration browses for, as the wyoming package's own HomeAssistantZeroconf registers
// it), so Home Assistant lists voxserve under discovered devices. Avahi's embeddable responder
// (avahi-core) does the protocol: no daemon or D-Bus is needed, which suits a container; it
// shares port 5353 with a host's own responder (SO_REUSEADDR) and renames on a conflict.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace voxserve::transport::wyoming {

// Owns Avahi's responder and the thread its event loop runs on. Announces from Create until
// destruction, which withdraws the service (goodbye packets) before it returns.
class ZeroconfAnnouncer {
 public:
  // `name`: the instance name shown to users ("voxserve"); `port`: the Wyoming listener's.
  static absl::StatusOr<std::unique_ptr<ZeroconfAnnouncer>> Create(std::string name, int port);
  ~ZeroconfAnnouncer();

  ZeroconfAnnouncer(const ZeroconfAnnouncer&) = delete;
  ZeroconfAnnouncer& operator=(const ZeroconfAnnouncer&) = delete;

 private:
  struct State;
  explicit ZeroconfAnnouncer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Whether a listener bound to `host` can be reached from other machines, so announcing it makes
// sense: false for loopback addresses and "localhost".
bool ReachableFromTheNetwork(const std::string& host);

}  // namespace voxserve::transport::wyoming
