// The API keys file (YAML), read at startup and again on SIGHUP:
//
//   keys:
//     - name: alice                  # shown in logs and metrics; the secret never is
//       key: "sk-..."                # or  sha256: "<64 hex digits of SHA-256(key)>"
//       rate_limit: {requests_per_second: 2, burst: 5}   # optional token bucket
//       max_concurrent: 4            # optional cap on requests running at once
//       models: [espeak]             # optional; default every model
//       client_subject: "CN=alice"   # optional: ties the key to an mTLS client certificate
//
// An entry with client_subject and no key/sha256 authenticates by its certificate alone.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "transport/auth/distinguished_name.h"

namespace voxserve::transport::auth {

using KeyDigest = std::array<uint8_t, 32>;  // SHA-256

struct RateLimit {
  double requests_per_second = 0;  // refill rate of the bucket
  double burst = 1;                // bucket size: requests allowed back to back
};

struct ApiKey {
  std::string name;  // [A-Za-z0-9_.-]{1,64}: a bounded metrics label and a safe log field
  std::optional<KeyDigest> digest;  // absent: certificate-only entry
  std::optional<RateLimit> rate_limit;
  std::optional<int> max_concurrent;
  std::vector<std::string> models;  // empty = every model
  std::string client_subject;       // as written, e.g. "CN=alice,O=Example" (for messages)
  DistinguishedName subject_name;   // client_subject parsed: what certificates are matched by
};

KeyDigest Sha256(std::string_view text);

// Errors name the file, the entry and the field.
absl::StatusOr<std::vector<ApiKey>> ParseApiKeys(const std::string& yaml,
                                                 const std::string& origin);
absl::StatusOr<std::vector<ApiKey>> LoadApiKeysFile(const std::string& path);

}  // namespace voxserve::transport::auth
