// UTF-8 checks at the edge of the service, so everything inside may assume valid UTF-8.
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace voxserve::text {

// OK, or InvalidArgument naming `param` and the byte offset of the first bad sequence
// (overlongs, surrogates and code points above U+10FFFF are rejected too).
absl::Status ValidateUtf8(std::string_view text, std::string_view param);

// Number of Unicode code points in valid UTF-8 (what OpenAI's 4096-character limit counts).
std::size_t CountCodePoints(std::string_view valid_utf8);

// `utf8` without the Unicode White_Space (e.g. U+3000 ideographic space, U+00A0) at either end.
std::string_view TrimWhitespace(std::string_view utf8);

}  // namespace voxserve::text
