// Maps method + path to a handler; unknown paths get 404, known paths with another method 405
// with an Allow header. A route path ending in "/*" matches that prefix plus one non-empty
// segment without '/' (e.g. "/v1/audio/voices/*" for a voice id).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "transport/auth/authenticator.h"
#include "transport/http/http_exchange.h"

namespace voxserve::transport::http {

using Handler = std::function<void(std::shared_ptr<HttpExchange>)>;
// How a route family answers errors the session finds before its handler runs (a refused key):
// a compatible API answers in its own shape (ElevenLabs' {"detail": ...}, which carries the
// exchange's request id). Null: ErrorResponse.
using ErrorFormatter =
    std::function<HttpResponse(const absl::Status&, std::string_view request_id)>;

// Built at startup, then read-only: safe cross thread.
class Router {
 public:
  // `resource` decides whether the route needs an API key (auth::Authenticator).
  void Add(std::string method, std::string path, Handler handler,
           auth::Resource resource = auth::Resource::kApi);
  // Every method on every path under `prefix` (which ends with '/'), for an API with path
  // parameters that routes its own paths; exact routes win, then the longest prefix. Its metrics
  // label is prefix + "*".
  void AddPrefix(std::string prefix, Handler handler, auth::Resource resource,
                 ErrorFormatter format_error);
  // Replaces each route's handler so far with wrap(path, handler); for test-only decorators
  // (fault_injection.h). Call before serving.
  void WrapAll(const std::function<Handler(const std::string& path, Handler)>& wrap);
  // A larger request body for one route than http.max_body_bytes (an audio upload); set after
  // Add. The session reads it once the request line is in, before any body byte.
  void SetBodyLimit(const std::string& method, const std::string& path, size_t max_body_bytes);
  // The body limit for a request: the route's own, or `fallback`.
  size_t BodyLimit(const std::string& method, const std::string& path, size_t fallback) const;
  // The largest body limit of any route, or `fallback` when larger: what Beast must allow
  // before the request line says which route it is.
  size_t LargestBodyLimit(size_t fallback) const;

  struct Match {
    const Handler* handler = nullptr;  // null → respond with `error`
    std::string route;                 // bounded label for metrics: the path, or "unmatched"
    auth::Resource resource = auth::Resource::kApi;  // unmatched paths too: no probing keyless
    HttpResponse error;
    ErrorFormatter format_error;  // null: ErrorResponse
  };
  Match Find(const std::string& method, const std::string& path) const;

 private:
  struct Route {
    std::string method;
    std::string path;
    Handler handler;
    auth::Resource resource;
    size_t max_body_bytes = 0;  // 0: the server's http.max_body_bytes
  };
  static bool Matches(const Route& route, const std::string& path);
  std::vector<Route> routes_;
  struct PrefixRoute {
    std::string prefix;
    Handler handler;
    auth::Resource resource;
    ErrorFormatter format_error;
  };
  std::vector<PrefixRoute> prefix_routes_;
};

}  // namespace voxserve::transport::http
