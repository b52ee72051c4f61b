// Settings of API key authentication (YAML: auth.*). Auth is on exactly when keys_file is set.
#pragma once

#include <string>

namespace voxserve::transport::auth {

struct AuthConfig {
  std::string keys_file;         // empty = no keys: every request is allowed (logged loudly)
  bool protect_health = false;   // load balancers probe /health* without credentials
  bool protect_metrics = false;  // Prometheus scrapes usually run inside the network, keyless
  // What access tokens are signed with (access_token.h); empty = 32 random bytes per process,
  // so tokens verify only on the replica that minted them and die with it.
  std::string token_secret_file;
};

}  // namespace voxserve::transport::auth
