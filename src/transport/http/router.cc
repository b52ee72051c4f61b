#include "transport/http/router.h"

#include <algorithm>

#include "core/error.h"
#include "transport/http/error_response.h"

namespace voxserve::transport::http {

void Router::Add(std::string method, std::string path, Handler handler, auth::Resource resource) {
  routes_.push_back({std::move(method), std::move(path), std::move(handler), resource});
}

void Router::AddPrefix(std::string prefix, Handler handler, auth::Resource resource,
                       ErrorFormatter format_error) {
  prefix_routes_.push_back(
      {std::move(prefix), std::move(handler), resource, std::move(format_error)});
}

void Router::WrapAll(const std::function<Handler(const std::string& path, Handler)>& wrap) {
  for (Route& route : routes_) route.handler = wrap(route.path, std::move(route.handler));
  for (PrefixRoute& route : prefix_routes_) {
    route.handler = wrap(route.prefix + "*", std::move(route.handler));
  }
}

bool Router::Matches(const Route& route, const std::string& path) {
  if (!route.path.ends_with("/*")) return route.path == path;
  const size_t prefix = route.path.size() - 1;  // keeps the '/'
  return path.size() > prefix && path.compare(0, prefix, route.path, 0, prefix) == 0 &&
         path.find('/', prefix) == std::string::npos;
}

void Router::SetBodyLimit(const std::string& method, const std::string& path,
                          size_t max_body_bytes) {
  for (Route& route : routes_) {
    if (route.method == method && route.path == path) route.max_body_bytes = max_body_bytes;
  }
}

size_t Router::BodyLimit(const std::string& method, const std::string& path,
                         size_t fallback) const {
  for (const Route& route : routes_) {
    if (route.method == method && route.max_body_bytes != 0 && Matches(route, path)) {
      return route.max_body_bytes;
    }
  }
  return fallback;
}

size_t Router::LargestBodyLimit(size_t fallback) const {
  size_t largest = fallback;
  for (const Route& route : routes_) largest = std::max(largest, route.max_body_bytes);
  return largest;
}

Router::Match Router::Find(const std::string& method, const std::string& path) const {
  std::string allowed;
  std::string_view allowed_route;  // the template, not the path: metrics label by it
  for (const Route& route : routes_) {
    if (!Matches(route, path)) continue;
    if (allowed_route.empty()) allowed_route = route.path;
    // HEAD is answered like GET by the session (same headers, no body).
    if (route.method == method || (method == "HEAD" && route.method == "GET")) {
      return {&route.handler, route.path, route.resource, {}};
    }
    allowed += (allowed.empty() ? "" : ", ") + route.method;
    // RFC 9110 §10.2.1: Allow lists every method served, and HEAD is served wherever GET is.
    if (route.method == "GET") allowed += ", HEAD";
  }
  if (allowed.empty()) {
    // The longest prefix wins: /elevenlabs/v1/pronunciation-dictionaries/ over /elevenlabs/v1/.
    const PrefixRoute* best = nullptr;
    for (const PrefixRoute& route : prefix_routes_) {
      if (path.starts_with(route.prefix) &&
          (best == nullptr || route.prefix.size() > best->prefix.size())) {
        best = &route;
      }
    }
    if (best != nullptr) {
      return {&best->handler, best->prefix + "*", best->resource, {}, best->format_error};
    }
  }
  Match match;
  match.route = "unmatched";
  if (allowed.empty()) {
    match.error =
        ErrorResponse(core::NotFound("no route for " + core::Quoted(path), {}, "route_not_found"));
  } else {
    match.route = std::string(allowed_route);
    match.error = ErrorResponse(core::MethodNotAllowed(
        core::Quoted(method) + " is not allowed on " + core::Quoted(path) + "; use " + allowed));
    match.error.SetHeader("Allow", allowed);
  }
  return match;
}

}  // namespace voxserve::transport::http
