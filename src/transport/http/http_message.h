// Plain request/response values for handlers, so route logic needs no Beast headers and can be
// tested without sockets. The session converts to and from Beast's types.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace voxserve::transport::http {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // target without the query
  std::string query;   // after '?', undecoded
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercased
  std::string body;

  // The first value of a header (name in lowercase), or empty.
  std::string_view Header(std::string_view lowercase_name) const;
};

struct HttpResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  HttpResponse& SetHeader(std::string name, std::string value);
};

HttpResponse JsonResponse(int status, std::string json);
HttpResponse TextResponse(int status, std::string content_type, std::string body);

}  // namespace voxserve::transport::http
