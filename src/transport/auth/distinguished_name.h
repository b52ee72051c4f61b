// An X.509 distinguished name as the set of its attributes, so that the way people write a
// subject ("CN=service-a,O=Example", most significant last) and the way OpenSSL and gRPC print a
// verified certificate's subject (RFC 2253: "O=Example,CN=service-a", last RDN first) name the
// same certificate. Both sides of a `client_subject` comparison are parsed into this.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::transport::auth {

// A value type; immutable after Parse, safe cross thread.
class DistinguishedName {
 public:
  // RFC 4514/2253 strings: `TYPE=value` pairs separated by ',' (or ';'), multi-valued RDNs by
  // '+'; spaces around separators are ignored; `\,` `\+` `\"` `\\` `\<` `\>` `\;` `\=` `\#` and
  // `\XX` (hex) escapes are decoded. Attribute types compare case-insensitively ("cn" = "CN"),
  // values exactly. Order does not matter; every attribute must match (no subset matches).
  static absl::StatusOr<DistinguishedName> Parse(std::string_view text);

  bool operator==(const DistinguishedName& other) const = default;
  bool empty() const { return attributes_.empty(); }

 private:
  std::vector<std::pair<std::string, std::string>> attributes_;  // sorted (TYPE, value)
};

}  // namespace voxserve::transport::auth
