// Requests refused before routing because their HTTP framing is wrong. Answered as JSON like
// every other error (Beast's WebSocket handshake would answer some of them in plain text).
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "transport/http/http_message.h"

namespace voxserve::transport::http {

// RFC 9112 §3.2: an HTTP/1.1 request carries exactly one Host field; one with none, or any
// request with several, is refused (InvalidArgument, code "bad_request": 400). `version` is
// Beast's: 11 for HTTP/1.1, 10 for HTTP/1.0 (which may omit it).
absl::Status CheckHost(const HttpRequest& request, unsigned version);

// For a request that asks to upgrade to WebSocket: the refusal RFC 6455 §4.2.1 calls for, or
// nothing when the handshake may proceed. Sec-WebSocket-Version other than 13 gets 426 with
// "Sec-WebSocket-Version: 13" (§4.4); a Sec-WebSocket-Key that is not the base64 of 16 bytes
// gets 400 (code "invalid_websocket_key").
std::optional<HttpResponse> RefuseWebSocketHandshake(const HttpRequest& request);

}  // namespace voxserve::transport::http
