#include "transport/http/playground_routes.h"

#include <string>
#include <utility>

namespace voxserve::transport::http {
namespace {

// Only our own files may run or load; audio plays from blob: URLs (the download link) and the
// API is same-origin. No inline script or style at all, no framing, no plugins.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "media-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

// If-None-Match is "*" or a comma-separated list of (possibly weak) ETags (RFC 9110 §13.1.2);
// weak comparison is the rule for it.
bool MatchesEtag(std::string_view if_none_match, std::string_view etag) {
  while (!if_none_match.empty()) {
    size_t comma = if_none_match.find(',');
    std::string_view candidate = if_none_match.substr(0, comma);
    if_none_match.remove_prefix(comma == std::string_view::npos ? if_none_match.size() : comma + 1);
    while (!candidate.empty() && candidate.front() == ' ') candidate.remove_prefix(1);
    while (!candidate.empty() && candidate.back() == ' ') candidate.remove_suffix(1);
    if (candidate.starts_with("W/")) candidate.remove_prefix(2);
    if (candidate == "*" || candidate == etag) return true;
  }
  return false;
}

}  // namespace

std::string_view ContentTypeFor(std::string_view path) {
  static constexpr std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"}};
  for (const auto& [extension, type] : kTypes) {
    if (path.ends_with(extension)) return type;
  }
  return "application/octet-stream";
}

HttpResponse StaticFileResponse(const EmbeddedFile& file, std::string_view if_none_match) {
  HttpResponse response;
  const bool not_modified = !if_none_match.empty() && MatchesEtag(if_none_match, file.etag);
  response.status = not_modified ? 304 : 200;
  if (!not_modified) {
    response.SetHeader("Content-Type", std::string(ContentTypeFor(file.path)));
    response.body = std::string(file.bytes);
  }
  response.SetHeader("ETag", std::string(file.etag));
  // File names carry no version, so browsers must ask each time; the ETag makes that a 304.
  response.SetHeader("Cache-Control", "no-cache");
  response.SetHeader("Content-Security-Policy", std::string(kContentSecurityPolicy));
  response.SetHeader("X-Content-Type-Options", "nosniff");
  response.SetHeader("Referrer-Policy", "no-referrer");
  return response;
}

void AddPlaygroundRoutes(Router& router, std::span<const EmbeddedFile> files) {
  for (const EmbeddedFile& file : files) {
    Handler handler = [&file](std::shared_ptr<HttpExchange> exchange) {
      exchange->Respond(StaticFileResponse(file, exchange->request().Header("if-none-match")));
    };
    router.Add("GET", file.path == "index.html" ? "/" : "/playground/" + std::string(file.path),
               std::move(handler), auth::Resource::kPage);
  }
}

}  // namespace voxserve::transport::http
