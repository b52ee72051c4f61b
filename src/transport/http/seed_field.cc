#include "transport/http/seed_field.h"

#include <cmath>

#include "core/error.h"

namespace voxserve::transport::http {

absl::StatusOr<uint64_t> ParseSeed(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  // A negative integer, or one past 2^64-1 (nlohmann reads it as a double): the right type,
  // the wrong range.
  const bool whole =
      value.is_number_integer() || (value.is_number_float() && std::isfinite(value.get<double>()) &&
                                    std::floor(value.get<double>()) == value.get<double>());
  if (!whole) return core::InvalidArgument("seed must be an integer", "seed", "invalid_type");
  return core::InvalidArgument("seed must be an integer from 0 to 18446744073709551615", "seed",
                               "invalid_seed");
}

}  // namespace voxserve::transport::http
