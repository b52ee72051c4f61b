#include "transport/wyoming/wyoming_config.h"

#include "core/error.h"
#include "transport/wyoming/client_allow_list.h"

namespace voxserve::transport::wyoming {

absl::Status WyomingConfig::Validate() const {
  if (port < 0 || port > 65535) {
    return core::InvalidArgument("wyoming.port must be within 0..65535");
  }
  if (max_connections < 1 || max_connections > 100'000) {
    return core::InvalidArgument("wyoming.max_connections must be within 1..100000");
  }
  if (idle_timeout_ms < 1 || idle_timeout_ms > 86'400'000) {
    return core::InvalidArgument("wyoming.idle_timeout_ms must be within 1..86400000");
  }
  return ClientAllowList::Parse(allow).status();
}

}  // namespace voxserve::transport::wyoming
