// The query of a request target (`a=1&b=x%20y`), decoded. Boost 1.74 has no Boost.URL, and the
// rules are short: RFC 3986 percent-encoding, plus '+' for a space as HTML forms and
// URLSearchParams write it.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace voxserve::transport::http {

// Names to values, both decoded; a name without '=' has an empty value; of a repeated name the
// last one counts. InvalidArgument (code "invalid_query", param the parameter's name when it is
// known) for a '%' not followed by two hex digits. Decoded bytes are not checked for UTF-8:
// callers compare them, and JSON output replaces bad sequences.
absl::StatusOr<std::map<std::string, std::string>> ParseQuery(std::string_view query);

}  // namespace voxserve::transport::http
