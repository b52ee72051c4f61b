// Shared between logging.cc (which configures) and structured_log.cc (which writes).
#pragma once

#include <memory>

#include "spdlog/logger.h"

namespace voxserve::core {

// The logger for LogFields in the json format (same sink and level as the default logger), or
// null in the text format.
std::shared_ptr<spdlog::logger> JsonFieldsLogger();

}  // namespace voxserve::core
