#include "transport/http/http_message.h"

namespace voxserve::transport::http {

std::string_view HttpRequest::Header(std::string_view lowercase_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lowercase_name) return value;
  }
  return {};
}

HttpResponse& HttpResponse::SetHeader(std::string name, std::string value) {
  for (auto& [existing, existing_value] : headers) {
    if (existing == name) {
      existing_value = std::move(value);
      return *this;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
  return *this;
}

HttpResponse JsonResponse(int status, std::string json) {
  return TextResponse(status, "application/json", std::move(json));
}

HttpResponse TextResponse(int status, std::string content_type, std::string body) {
  HttpResponse response;
  response.status = status;
  response.SetHeader("Content-Type", std::move(content_type));
  response.body = std::move(body);
  return response;
}

}  // namespace voxserve::transport::http
