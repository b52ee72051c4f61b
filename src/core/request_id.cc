#include "core/request_id.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <random>

namespace voxserve::core {

std::string NewRequestId() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(random()));
  return buffer;
}

std::string RequestIdOrNew(std::string_view given) {
  const bool usable = !given.empty() && given.size() <= 128 &&
                      std::all_of(given.begin(), given.end(), [](char c) {
                        return std::isprint(static_cast<unsigned char>(c)) != 0;
                      });
  return usable ? std::string(given) : NewRequestId();
}

}  // namespace voxserve::core
