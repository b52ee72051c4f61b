#include "transport/http/request_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"

namespace voxserve::transport::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Pair;

HttpRequest WithHeaders(std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest request;
  request.method = "GET";
  request.path = "/v1/audio/speech/stream";
  request.headers = std::move(headers);
  return request;
}

HttpRequest Handshake(std::string key, std::string version = "13") {
  return WithHeaders({{"host", "x"},
                      {"upgrade", "websocket"},
                      {"connection", "Upgrade"},
                      {"sec-websocket-key", std::move(key)},
                      {"sec-websocket-version", std::move(version)}});
}

TEST(CheckHost, Http11NeedsExactlyOneHost) {
  EXPECT_TRUE(CheckHost(WithHeaders({{"host", "example"}}), 11).ok());
  absl::Status missing = CheckHost(WithHeaders({}), 11);
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(missing).code, "bad_request");
  EXPECT_THAT(std::string(missing.message()), HasSubstr("Host"));
  EXPECT_FALSE(CheckHost(WithHeaders({{"host", "a"}, {"host", "b"}}), 11).ok());
}

TEST(CheckHost, Http10MayOmitItButNotRepeatIt) {
  EXPECT_TRUE(CheckHost(WithHeaders({}), 10).ok());
  EXPECT_FALSE(CheckHost(WithHeaders({{"host", "a"}, {"host", "b"}}), 10).ok());
}

TEST(RefuseWebSocketHandshake, AcceptsTheRfcExampleKey) {
  EXPECT_EQ(RefuseWebSocketHandshake(Handshake("dGhlIHNhbXBsZSBub25jZQ==")), std::nullopt);
}

TEST(RefuseWebSocketHandshake, RefusesKeysThatAreNotBase64Of16BytesWithJson400) {
  for (const char* key : {"", "not-base64-at-all!!!!!!!", "dGhlIHNhbXBsZSBub25jZQ",
                          "dGhlIHNhbXBsZSBub25jZQ==AAAA", "AAAAAAAAAAAAAAAAAAAAAAAA"}) {
    std::optional<HttpResponse> refusal = RefuseWebSocketHandshake(Handshake(key));
    ASSERT_TRUE(refusal.has_value()) << key;
    EXPECT_EQ(refusal->status, 400) << key;
    EXPECT_THAT(refusal->body, HasSubstr("\"code\":\"invalid_websocket_key\"")) << key;
  }
}

TEST(RefuseWebSocketHandshake, AnotherVersionGets426InJsonNamingVersion13) {
  std::optional<HttpResponse> refusal =
      RefuseWebSocketHandshake(Handshake("dGhlIHNhbXBsZSBub25jZQ==", "8"));
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->status, 426);
  EXPECT_THAT(refusal->headers, ::testing::Contains(Pair("Sec-WebSocket-Version", "13")));
  EXPECT_THAT(refusal->body, HasSubstr("\"code\":\"unsupported_websocket_version\""));
}

}  // namespace
}  // namespace voxserve::transport::http
