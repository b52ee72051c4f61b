// Settings of API key authentication (YAML: auth.*). Auth is on exactly when keys_file is set.
#pragma once

#include <string>

namespace voxserve::transport::auth {

struct AuthConfig {
  std::string keys_file;         // empty = no keys: every request is allowed (logged loudly)
  bool protect_health = false;   // load balancers probe /health* without credentials
  bool protect_metrics = false;  // Prometheus scrapes usually run inside the network, keyless
};

}  // namespace voxserve::transport::auth
