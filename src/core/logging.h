// Process-wide logging setup (spdlog). Log lines go to stderr so stdout stays free for tools.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace voxserve::core {

// level: trace|debug|info|warn|error|off. format: "text" (human) or "json" (one object per line).
// origin, when given, marks every line of this process (a worker process: "worker MODEL PID";
// text: in brackets before the message, json: an "origin" field), so the workers' lines can be
// told from the server's in the one log they share.
absl::Status ConfigureLogging(std::string_view level, std::string_view format,
                              std::string_view origin = {});

// The level and format ConfigureLogging last set (info, text before it ran): what worker
// processes are started with.
struct LoggingSettings {
  std::string level = "info";
  std::string format = "text";
};
LoggingSettings CurrentLogging();

}  // namespace voxserve::core
