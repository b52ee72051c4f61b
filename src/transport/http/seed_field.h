// The "seed" field as every JSON API reads it (REST, the WebSocket stream, ElevenLabs): the
// same range, code and reasons everywhere.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::http {

// A seed is an integer from 0 to 2^64-1. Not a number, or a fraction: InvalidArgument
// `invalid_type`. A whole number outside that range (-1, 2^64, which JSON parsers read as a
// float): InvalidArgument `invalid_seed` naming the range. Both name "seed". `value` is not null.
absl::StatusOr<uint64_t> ParseSeed(const nlohmann::json& value);

}  // namespace voxserve::transport::http
