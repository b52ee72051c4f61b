// Conversions between Beast's messages and the plain HttpRequest/HttpResponse handlers see, and
// the request id every response carries.
#pragma once

#include <boost/beast/http.hpp>
#include <string>

#include "transport/http/http_message.h"

namespace voxserve::transport::http {

// The client's X-Request-Id when short and printable (core::RequestIdOrNew), else a new one.
std::string RequestIdFrom(const HttpRequest& request);

// Moves the body out of `message`.
HttpRequest ToHttpRequest(boost::beast::http::request<boost::beast::http::string_body>& message);

template <typename Message>
void CopyHeaders(const HttpResponse& response, const std::string& request_id, Message& message) {
  for (const auto& [name, value] : response.headers) message.set(name, value);
  message.set(boost::beast::http::field::server, "voxserve");
  message.set("X-Request-Id", request_id);
}

}  // namespace voxserve::transport::http
