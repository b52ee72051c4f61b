// CORS (transport/http/cors.h): preflights, the headers of actual responses, WebSocket origins.
#include "transport/http/cors.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::http {
namespace {

constexpr std::string_view kApp = "https://app.example.com";

HttpRequest Preflight(std::string origin, std::string method, std::string headers = "") {
  HttpRequest request;
  request.method = "OPTIONS";
  request.path = "/v1/audio/speech";
  request.headers = {{"origin", std::move(origin)},
                     {"access-control-request-method", std::move(method)}};
  if (!headers.empty()) request.headers.emplace_back("access-control-request-headers", headers);
  return request;
}

std::optional<std::string> HeaderOf(const HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

Cors AllowingApp() {
  CorsConfig config;
  config.allowed_origins = {std::string(kApp)};
  return Cors(config);
}

TEST(Cors, OffByDefault) {
  Cors off{CorsConfig{}};
  EXPECT_FALSE(off.enabled());
  auto answer = off.Preflight(Preflight(std::string(kApp), "POST"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 403);
  EXPECT_EQ(nlohmann::json::parse(answer->body)["error"]["code"], "cors_refused");
  EXPECT_TRUE(off.ResponseHeaders(kApp).empty());
  EXPECT_TRUE(off.AllowsWebSocket(kApp, "voxserve:8080"));  // unchanged while off
}

TEST(Cors, AnAllowedPreflightGetsEveryAllowHeader) {
  Cors cors = AllowingApp();
  auto answer = cors.Preflight(Preflight(std::string(kApp), "POST", "content-type, X-API-Key"));
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 204);
  EXPECT_EQ(HeaderOf(*answer, "Access-Control-Allow-Origin"), std::string(kApp));
  EXPECT_EQ(HeaderOf(*answer, "Access-Control-Allow-Methods"), "GET, POST, DELETE, PATCH");
  EXPECT_EQ(HeaderOf(*answer, "Access-Control-Allow-Headers"),
            "Authorization, Content-Type, X-Api-Key, Xi-Api-Key, X-Request-Id, Cache-Control");
  EXPECT_EQ(HeaderOf(*answer, "Access-Control-Max-Age"), "600");
  EXPECT_EQ(HeaderOf(*answer, "Vary"), "Origin");
}

TEST(Cors, RefusesOtherOriginsMethodsAndHeadersSayingWhich) {
  Cors cors = AllowingApp();
  auto message = [&](HttpRequest request) {
    auto answer = cors.Preflight(request);
    EXPECT_TRUE(answer && answer->status == 403);
    return answer ? nlohmann::json::parse(answer->body)["error"]["message"].get<std::string>()
                  : std::string();
  };
  EXPECT_EQ(message(Preflight("https://evil.example", "POST")),
            "origin 'https://evil.example' is not in http.cors.allowed_origins");
  EXPECT_EQ(message(Preflight(std::string(kApp), "PUT")),
            "method 'PUT' is not in http.cors.allowed_methods");
  EXPECT_EQ(message(Preflight(std::string(kApp), "POST", "x-secret")),
            "header 'x-secret' is not in http.cors.allowed_headers");
  // Not a preflight: handled as any request.
  HttpRequest plain_options = Preflight(std::string(kApp), "POST");
  plain_options.headers.pop_back();
  EXPECT_FALSE(cors.Preflight(plain_options));
}

TEST(Cors, ActualResponsesCarryTheOriginOnlyWhenAllowed) {
  Cors cors = AllowingApp();
  using Headers = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(cors.ResponseHeaders(kApp),
            (Headers{{"Vary", "Origin"},
                     {"Access-Control-Allow-Origin", std::string(kApp)},
                     {"Access-Control-Expose-Headers",
                      "X-Request-Id, X-Sample-Rate, X-Cache, Retry-After"}}));
  EXPECT_EQ(cors.ResponseHeaders("https://evil.example"), (Headers{{"Vary", "Origin"}}));
  EXPECT_EQ(cors.ResponseHeaders(""), (Headers{{"Vary", "Origin"}}));
  CorsConfig any;
  any.allowed_origins = {"*"};
  EXPECT_TRUE(Cors(any).Allows("http://localhost:3000"));
}

TEST(Cors, WebSocketsOpenFromNoOriginTheServersOwnOrAnAllowedOne) {
  Cors cors = AllowingApp();
  EXPECT_TRUE(cors.AllowsWebSocket("", "voxserve:8080"));                      // not a browser
  EXPECT_TRUE(cors.AllowsWebSocket("http://voxserve:8080", "voxserve:8080"));  // the playground
  EXPECT_TRUE(cors.AllowsWebSocket(kApp, "voxserve:8080"));
  EXPECT_FALSE(cors.AllowsWebSocket("https://evil.example", "voxserve:8080"));
}

TEST(CorsConfig, ValidateNamesTheKeyAndTheBadValue) {
  CorsConfig config;
  config.allowed_origins = {"https://app.example.com/path"};
  EXPECT_NE(std::string(config.Validate().message()).find("http.cors.allowed_origins"),
            std::string::npos);
  config.allowed_origins = {"app.example.com"};
  EXPECT_FALSE(config.Validate().ok());
  config.allowed_origins = {"*", "http://localhost:3000"};
  EXPECT_TRUE(config.Validate().ok());
  config.allowed_headers = {"bad header"};
  EXPECT_NE(std::string(config.Validate().message()).find("http.cors.allowed_headers"),
            std::string::npos);
}

}  // namespace
}  // namespace voxserve::transport::http
