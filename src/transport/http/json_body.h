// A request body that must be one JSON object: the media type, UTF-8 and syntax checked, with
// errors a client can act on (415, or 400 invalid_utf8 / invalid_json).
#pragma once

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "transport/http/http_message.h"

namespace voxserve::transport::http {

absl::StatusOr<nlohmann::json> ParseJsonObject(const HttpRequest& request);

}  // namespace voxserve::transport::http
