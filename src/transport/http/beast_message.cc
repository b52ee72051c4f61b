#include "transport/http/beast_message.h"

#include <cctype>
#include <cstdio>
#include <random>

namespace voxserve::transport::http {

std::string NewRequestId() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(random()));
  return buffer;
}

std::string RequestIdFrom(const HttpRequest& request) {
  std::string_view given = request.Header("x-request-id");
  if (given.empty() || given.size() > 128) return NewRequestId();
  for (char c : given) {
    if (!std::isprint(static_cast<unsigned char>(c))) return NewRequestId();
  }
  return std::string(given);
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
