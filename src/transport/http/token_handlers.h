// POST /v1/tokens (docs/operations.md#access-tokens): an API key mints a short-lived access
// token for a client that must not hold the key (a browser page). The token stands for the key
// on every route, in an Authorization header or, on WebSocket routes, as ?token= in the URL.
#pragma once

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "transport/auth/authenticator.h"
#include "transport/http/http_message.h"
#include "transport/http/router.h"

namespace voxserve::transport::http {

// {expires_in (seconds, default 300), single_use (default false), models ([ids])}; an empty
// body takes every default.
absl::StatusOr<auth::TokenRequest> ParseTokenRequest(const HttpRequest& request);

// {token, expires_at (Unix seconds), expires_in, single_use, models}.
nlohmann::json MintedTokenJson(const auth::MintedToken& minted, int64_t expires_in);

// The authenticator outlives the router's handlers.
void AddTokenRoutes(Router& router, const auth::Authenticator& authenticator);

}  // namespace voxserve::transport::http
