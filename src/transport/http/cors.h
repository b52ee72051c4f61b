// Cross-origin requests from browsers (the Fetch standard's CORS protocol): which web pages, by
// origin, may call the API. Off until origins are listed (http.cors.*): by default no other
// site's page can read a response, and a one-box server stays private to its own playground.
//
// Preflights (OPTIONS with Origin and Access-Control-Request-Method) are answered here, before
// authentication: browsers send them without credentials. Actual responses to an allowed origin
// carry Access-Control-Allow-Origin and the exposed headers (X-Request-Id, X-Sample-Rate,
// X-Cache by default), streamed ones included. What CORS does not cover, WebSocket handshakes,
// the session checks with AllowsWebSocket.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "transport/http/http_message.h"

namespace voxserve::transport::http {

struct CorsConfig {
  // Origins as browsers send them ("https://app.example.com", "http://localhost:3000"), or "*"
  // for any. Empty: CORS off.
  std::vector<std::string> allowed_origins;
  std::vector<std::string> allowed_methods = {"GET", "POST", "DELETE", "PATCH"};
  // Request headers a page may send (besides the CORS-safelisted ones): the API keys' headers,
  // JSON bodies, request ids, the cache's Cache-Control.
  std::vector<std::string> allowed_headers = {"Authorization", "Content-Type", "X-Api-Key",
                                              "Xi-Api-Key",    "X-Request-Id", "Cache-Control"};
  // Response headers a page may read (besides the safelisted ones).
  std::vector<std::string> exposed_headers = {"X-Request-Id", "X-Sample-Rate", "X-Cache",
                                              "Retry-After"};
  int max_age_seconds = 600;  // how long a browser may reuse a preflight's answer

  bool enabled() const { return !allowed_origins.empty(); }
  // InvalidArgument naming the http.cors.* key: an origin must be "*" or scheme://host[:port]
  // with no path (what a browser sends), methods and headers tokens.
  absl::Status Validate() const;
};

class Cors {
 public:
  explicit Cors(CorsConfig config);

  bool enabled() const { return config_.enabled(); }
  bool Allows(std::string_view origin) const;

  // The answer to a preflight, or nullopt when `request` is not one (then it is handled as any
  // request). An allowed origin asking for allowed methods and headers gets 204 with the
  // Access-Control-Allow-* headers; anything else 403 with a JSON error naming what is refused.
  std::optional<HttpResponse> Preflight(const HttpRequest& request) const;

  // The headers an actual response to a request from `origin` carries: none when `origin` is
  // empty or not allowed (the browser then keeps the response from the page). Vary: Origin
  // whenever CORS is on, so caches do not hand one origin's answer to another.
  std::vector<std::pair<std::string, std::string>> ResponseHeaders(std::string_view origin) const;

  // A WebSocket handshake's Origin: none (not a browser), the server's own (`host`, as in the
  // Host header), or an allowed one. Only checked while CORS is on.
  bool AllowsWebSocket(std::string_view origin, std::string_view host) const;

 private:
  const CorsConfig config_;
  const std::string methods_;  // joined for the headers
  const std::string headers_;
  const std::string exposed_;
};

}  // namespace voxserve::transport::http
