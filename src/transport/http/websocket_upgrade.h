// The seam between the HTTP session and the WebSocket transport (transport/websocket, which
// depends on this module, not the other way round). A GET that asks to upgrade, on a path the
// upgrader serves, is authenticated and admitted by the HTTP session like any request; then the
// connection (plain or TLS) and the parsed request are handed over whole.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "core/request_context.h"
#include "transport/auth/authenticator.h"
#include "transport/auth/key_limiter.h"
#include "transport/http/http_stream.h"

namespace voxserve::transport::http {

// Everything the WebSocket side needs; moved into it.
struct UpgradeRequest {
  HttpStream stream;  // the connection; TLS, when it has it, is established
  boost::beast::http::request<boost::beast::http::string_body> message;  // for the handshake
  std::string request_id;      // X-Request-Id of the 101 and of every log line
  auth::AuthResult caller;     // who is calling (key name, allowed models)
  auth::Admission admission;   // the key's concurrency slot, held while the socket is open
  std::string remote;          // peer address, for logs
  core::Clock::time_point received_at;
  // False: keys are configured and the upgrade carried none that is valid, on a path whose
  // protocol takes the key in its first message (ElevenLabs' xi_api_key); it must check it.
  bool authenticated = true;
};

// Outlives the HTTP server that calls it. Every method is safe cross thread.
class WebSocketUpgrader {
 public:
  virtual ~WebSocketUpgrader() = default;

  virtual bool Serves(std::string_view path) const = 0;
  // Whether the protocol on `path` authenticates in its first message, so an upgrade without a
  // valid key is handed over (with UpgradeRequest::authenticated false) instead of refused.
  virtual bool AuthenticatesInStream(std::string_view /*path*/) const { return false; }
  // Called on the connection's strand; takes the connection over (handshake included).
  virtual void Upgrade(UpgradeRequest request) = 0;
  // Open WebSocket connections: they count against http.max_connections.
  virtual size_t open_connections() const = 0;
  // Shutdown has begun: each socket finishes the work it has started, then closes (1001).
  virtual void Drain() = 0;
  // Blocks until every WebSocket has closed, or the timeout passes; true when all have.
  virtual bool WaitClosed(std::chrono::milliseconds timeout) = 0;
  // The server stops: every socket is closed now and its work cancelled.
  virtual void CloseAll() = 0;
};

}  // namespace voxserve::transport::http
