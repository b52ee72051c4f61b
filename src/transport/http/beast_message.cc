#include "transport/http/beast_message.h"

#include <cctype>

#include "core/request_id.h"

namespace voxserve::transport::http {

std::string RequestIdFrom(const HttpRequest& request) {
  return core::RequestIdOrNew(request.Header("x-request-id"));
}

HttpRequest ToHttpRequest(boost::beast::http::request<boost::beast::http::string_body>& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  std::string_view target(message.target().data(), message.target().size());
  size_t question = target.find('?');
  request.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) request.query = std::string(target.substr(question + 1));
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  request.body = std::move(message.body());
  return request;
}

}  // namespace voxserve::transport::http
