// Shared between logging.cc (which configures) and structured_log.cc (which writes).
#pragma once

#include <memory>
#include <string>

#include "nlohmann/json.hpp"
#include "spdlog/logger.h"

namespace voxserve::core {

// The logger for LogFields in the json format (same sink and level as the default logger), or
// null in the text format.
std::shared_ptr<spdlog::logger> JsonFieldsLogger();

// `value` as compact JSON for a log line; invalid UTF-8 is replaced, never thrown on.
std::string JsonForLog(const nlohmann::json& value);

}  // namespace voxserve::core
