// The web playground (web/, compiled in): the page at `/`, its other files at `/playground/NAME`.
// Every file is the same for every caller, so the routes are open even with API keys on (the page
// asks for a key when the API answers 401). Unknown names are the router's JSON 404.
#pragma once

#include <span>
#include <string_view>

#include "transport/http/embedded_file.h"
#include "transport/http/http_message.h"
#include "transport/http/router.h"

namespace voxserve::transport::http {

// The files must outlive the router (PlaygroundFiles() are static).
void AddPlaygroundRoutes(Router& router, std::span<const EmbeddedFile> files);

// 200 with the file, or 304 when `if_none_match` (the request's If-None-Match) names its ETag;
// both with the playground's cache and security headers.
HttpResponse StaticFileResponse(const EmbeddedFile& file, std::string_view if_none_match);

// By extension; application/octet-stream for the unknown (never sniffed: nosniff is sent).
std::string_view ContentTypeFor(std::string_view path);

}  // namespace voxserve::transport::http
