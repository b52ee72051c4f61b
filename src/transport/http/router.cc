#include "transport/http/router.h"

#include "core/error.h"
#include "transport/http/error_response.h"

namespace voxserve::transport::http {

void Router::Add(std::string method, std::string path, Handler handler,
                 auth::Resource resource) {
  routes_.push_back({std::move(method), std::move(path), std::move(handler), resource});
}

void Router::WrapAll(const std::function<Handler(const std::string& path, Handler)>& wrap) {
  for (Route& route : routes_) route.handler = wrap(route.path, std::move(route.handler));
}

Router::Match Router::Find(const std::string& method, const std::string& path) const {
  std::string allowed;
  for (const Route& route : routes_) {
    if (route.path != path) continue;
    // HEAD is answered like GET by the session (same headers, no body).
    if (route.method == method || (method == "HEAD" && route.method == "GET")) {
      return {&route.handler, route.path, route.resource, {}};
    }
    allowed += (allowed.empty() ? "" : ", ") + route.method;
  }
  Match match;
  match.route = "unmatched";
  if (allowed.empty()) {
    match.error = ErrorResponse(core::NotFound("no route for " + path, {}, "route_not_found"));
  } else {
    match.route = path;
    match.error = ErrorResponse(
        core::MethodNotAllowed(method + " is not allowed on " + path + "; use " + allowed));
    match.error.SetHeader("Allow", allowed);
  }
  return match;
}

}  // namespace voxserve::transport::http
