// Process-wide logging setup (spdlog). Log lines go to stderr so stdout stays free for tools.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace voxserve::core {

// level: trace|debug|info|warn|error|off. format: "text" (human) or "json" (one object per line).
absl::Status ConfigureLogging(std::string_view level, std::string_view format);

}  // namespace voxserve::core
