#include "transport/http/cors.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/error.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::http {
namespace {

// (Debian's Abseil has its own string_view: std's helpers here.)
bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return absl::ascii_tolower(static_cast<unsigned char>(x)) ==
                  absl::ascii_tolower(static_cast<unsigned char>(y));
         });
}

// `text` without a leading "http://" or "https://"; nullopt when it has neither.
std::optional<std::string_view> AfterScheme(std::string_view text) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (text.starts_with(scheme)) return text.substr(scheme.size());
  }
  return std::nullopt;
}

// RFC 9110 token characters: what a method or header name is made of.
bool IsToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  });
}

// What a browser sends as Origin: scheme "://" host [":" port], nothing after.
bool IsOrigin(std::string_view origin) {
  const std::optional<std::string_view> rest = AfterScheme(origin);
  if (!rest) return false;
  return !rest->empty() && std::none_of(rest->begin(), rest->end(), [](char c) {
    return c == '/' || c == '?' || c == '#' || absl::ascii_isspace(static_cast<unsigned char>(c));
  });
}

bool ContainsIgnoringCase(const std::vector<std::string>& list, std::string_view value) {
  return std::any_of(list.begin(), list.end(),
                     [&](const std::string& item) { return EqualsIgnoringCase(item, value); });
}

HttpResponse Refused(const std::string& message) {
  nlohmann::json body = {{"error",
                          {{"message", message},
                           {"type", "invalid_request_error"},
                           {"code", "cors_refused"},
                           {"param", nullptr}}}};
  return JsonResponse(403, body.dump());
}

}  // namespace

absl::Status CorsConfig::Validate() const {
  for (const std::string& origin : allowed_origins) {
    if (origin != "*" && !IsOrigin(origin)) {
      return core::InvalidArgument("http.cors.allowed_origins: " + core::Quoted(origin) +
                                   " is not an origin: write scheme://host[:port], as a browser "
                                   "sends it (https://app.example.com), or *");
    }
  }
  for (const auto& [key, list] : {std::pair{"allowed_methods", &allowed_methods},
                                  std::pair{"allowed_headers", &allowed_headers},
                                  std::pair{"exposed_headers", &exposed_headers}}) {
    for (const std::string& item : *list) {
      if (!IsToken(item)) {
        return core::InvalidArgument(std::string("http.cors.") + key + ": " + core::Quoted(item) +
                                     " is not an HTTP token");
      }
    }
  }
  if (max_age_seconds < 0 || max_age_seconds > 86'400) {
    return core::InvalidArgument("http.cors.max_age_seconds must be 0..86400");
  }
  return absl::OkStatus();
}

Cors::Cors(CorsConfig config)
    : config_(std::move(config)),
      methods_(absl::StrJoin(config_.allowed_methods, ", ")),
      headers_(absl::StrJoin(config_.allowed_headers, ", ")),
      exposed_(absl::StrJoin(config_.exposed_headers, ", ")) {}

bool Cors::Allows(std::string_view origin) const {
  if (origin.empty()) return false;
  return std::any_of(config_.allowed_origins.begin(), config_.allowed_origins.end(),
                     [&](const std::string& allowed) {
                       return allowed == "*" || EqualsIgnoringCase(allowed, origin);
                     });
}

std::optional<HttpResponse> Cors::Preflight(const HttpRequest& request) const {
  const std::string_view origin = request.Header("origin");
  const std::string_view method = request.Header("access-control-request-method");
  if (request.method != "OPTIONS" || origin.empty() || method.empty()) return std::nullopt;
  if (!enabled()) {
    return Refused(
        "cross-origin requests are off on this server: list the page's origin in "
        "http.cors.allowed_origins");
  }
  if (!Allows(origin)) {
    return Refused("origin " + core::Quoted(origin) + " is not in http.cors.allowed_origins");
  }
  if (!ContainsIgnoringCase(config_.allowed_methods, method)) {
    return Refused("method " + core::Quoted(method) + " is not in http.cors.allowed_methods");
  }
  const std::string_view asked = request.Header("access-control-request-headers");
  for (absl::string_view item :
       absl::StrSplit(absl::string_view(asked.data(), asked.size()), ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    const std::string_view header(item.data(), item.size());
    if (!ContainsIgnoringCase(config_.allowed_headers, header)) {
      return Refused("header " + core::Quoted(header) + " is not in http.cors.allowed_headers");
    }
  }
  HttpResponse response;
  response.status = 204;
  response.SetHeader("Access-Control-Allow-Origin", std::string(origin));
  response.SetHeader("Access-Control-Allow-Methods", methods_);
  response.SetHeader("Access-Control-Allow-Headers", headers_);
  response.SetHeader("Access-Control-Max-Age", std::to_string(config_.max_age_seconds));
  response.SetHeader("Vary", "Origin");
  return response;
}

std::vector<std::pair<std::string, std::string>> Cors::ResponseHeaders(
    std::string_view origin) const {
  if (!enabled()) return {};
  std::vector<std::pair<std::string, std::string>> headers = {{"Vary", "Origin"}};
  if (Allows(origin)) {
    headers.emplace_back("Access-Control-Allow-Origin", std::string(origin));
    if (!exposed_.empty()) headers.emplace_back("Access-Control-Expose-Headers", exposed_);
  }
  return headers;
}

bool Cors::AllowsWebSocket(std::string_view origin, std::string_view host) const {
  if (!enabled() || origin.empty()) return true;
  if (std::optional<std::string_view> rest = AfterScheme(origin);
      rest && EqualsIgnoringCase(*rest, host)) {
    return true;  // the server's own pages (the playground)
  }
  return Allows(origin);
}

}  // namespace voxserve::transport::http
