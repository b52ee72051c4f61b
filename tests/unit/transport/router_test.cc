#include "transport/http/router.h"

#include <memory>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::http {
namespace {

std::optional<std::string> HeaderOf(const HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

// Each handler records its own name, so a test can tell which one the router picked.
class RouterTest : public ::testing::Test {
 protected:
  RouterTest() {
    router_.Add("GET", "/health", Named("health"));
    router_.Add("GET", "/v1/models", Named("list models"));
    router_.Add("POST", "/v1/audio/speech", Named("speech"));
    router_.Add("GET", "/tts", Named("tts get"));
    router_.Add("POST", "/tts", Named("tts post"));
  }

  Handler Named(std::string name) {
    return [this, name](std::shared_ptr<HttpExchange>) { called_ = name; };
  }

  // The name of the handler Find picked, or nothing when it picked none.
  std::optional<std::string> Pick(const std::string& method, const std::string& path) {
    Router::Match match = router_.Find(method, path);
    if (match.handler == nullptr) return std::nullopt;
    called_.clear();
    (*match.handler)(nullptr);
    return called_;
  }

  Router router_;
  std::string called_;
};

TEST_F(RouterTest, ExactMethodAndPathSelectTheHandler) {
  EXPECT_EQ(Pick("POST", "/v1/audio/speech"), "speech");
  EXPECT_EQ(Pick("GET", "/v1/models"), "list models");
}

TEST_F(RouterTest, SamePathWithDifferentMethodsSelectsByMethod) {
  EXPECT_EQ(Pick("GET", "/tts"), "tts get");
  EXPECT_EQ(Pick("POST", "/tts"), "tts post");
}

TEST_F(RouterTest, MatchedRouteLabelIsThePath) {
  EXPECT_EQ(router_.Find("GET", "/health").route, "/health");
}

TEST_F(RouterTest, PathsMatchExactlyNotByPrefix) {
  EXPECT_EQ(Pick("GET", "/health/extra"), std::nullopt);
  EXPECT_EQ(Pick("GET", "/healt"), std::nullopt);
  EXPECT_EQ(Pick("GET", "/health/"), std::nullopt);
}

TEST_F(RouterTest, TheLongestPrefixWinsWhateverTheOrderOfAdding) {
  router_.AddPrefix("/api/v1/", Named("api"), auth::Resource::kApi, nullptr);
  router_.AddPrefix("/api/v1/dictionaries/", Named("dictionaries"), auth::Resource::kApi, nullptr);
  router_.AddPrefix("/api/", Named("api root"), auth::Resource::kApi, nullptr);
  EXPECT_EQ(Pick("GET", "/api/v1/dictionaries/pd_1/v/download"), "dictionaries");
  EXPECT_EQ(Pick("POST", "/api/v1/text-to-speech/x"), "api");
  EXPECT_EQ(Pick("GET", "/api/v2"), "api root");
  EXPECT_EQ(router_.Find("GET", "/api/v1/dictionaries/x").route, "/api/v1/dictionaries/*");
}

TEST_F(RouterTest, UnknownPathIs404WithUnmatchedRouteLabel) {
  Router::Match match = router_.Find("GET", "/nope");
  EXPECT_EQ(match.handler, nullptr);
  EXPECT_EQ(match.route, "unmatched");
  EXPECT_EQ(match.error.status, 404);
}

TEST_F(RouterTest, UnknownPathErrorIsAnOpenAiErrorBody) {
  auto body = nlohmann::json::parse(router_.Find("GET", "/nope").error.body);
  EXPECT_EQ(body["error"]["code"], "route_not_found");
}

TEST_F(RouterTest, KnownPathWithOtherMethodIs405) {
  Router::Match match = router_.Find("GET", "/v1/audio/speech");
  EXPECT_EQ(match.handler, nullptr);
  EXPECT_EQ(match.error.status, 405);
}

TEST_F(RouterTest, MethodNotAllowedKeepsTheRouteAsLabel) {
  EXPECT_EQ(router_.Find("DELETE", "/health").route, "/health");
  // The route's template, not the client's path: one series per made-up id would grow the
  // metrics without bound (issue 39).
  router_.Add("GET", "/v1/audio/voices/*", Named("voice"));
  Router::Match match = router_.Find("PUT", "/v1/audio/voices/voice_made_up_12345");
  EXPECT_EQ(match.error.status, 405);
  EXPECT_EQ(match.route, "/v1/audio/voices/*");
}

TEST_F(RouterTest, MethodNotAllowedListsTheAllowedMethodInAllow) {
  EXPECT_EQ(HeaderOf(router_.Find("GET", "/v1/audio/speech").error, "Allow"), "POST");
}

TEST_F(RouterTest, MethodNotAllowedListsEveryAllowedMethodInAllowWithHeadBesideGet) {
  // HEAD is served wherever GET is (RFC 9110 §10.2.1: Allow lists every method served).
  EXPECT_EQ(HeaderOf(router_.Find("DELETE", "/tts").error, "Allow"), "GET, HEAD, POST");
  EXPECT_EQ(HeaderOf(router_.Find("POST", "/health").error, "Allow"), "GET, HEAD");
}

TEST_F(RouterTest, MethodNotAllowedEchoesAHugePathBounded) {
  const std::string path = "/tts" + std::string(100'000, 'x');
  router_.Add("GET", path, Named("long"));
  const HttpResponse error = router_.Find("DELETE", path).error;
  EXPECT_EQ(error.status, 405);
  EXPECT_LT(error.body.size(), 1000u);
  EXPECT_LT(router_.Find("GET", "/nope" + std::string(100'000, 'x')).error.body.size(), 1000u);
}

TEST_F(RouterTest, HeadIsAnsweredByTheGetRoute) { EXPECT_EQ(Pick("HEAD", "/health"), "health"); }

TEST_F(RouterTest, HeadOnAPostOnlyPathIs405) {
  Router::Match match = router_.Find("HEAD", "/v1/audio/speech");
  EXPECT_EQ(match.handler, nullptr);
  EXPECT_EQ(match.error.status, 405);
}

TEST_F(RouterTest, MethodsAreCaseSensitive) {
  // RFC 9110 §9.1: method names are case-sensitive; "get" is not GET.
  EXPECT_EQ(router_.Find("get", "/health").error.status, 405);
}

TEST(RouterPattern, AStarSegmentMatchesOneNonEmptySegment) {
  Router router;
  std::string called;
  router.Add("GET", "/v1/audio/voices", [&](std::shared_ptr<HttpExchange>) { called = "list"; });
  router.Add("GET", "/v1/audio/voices/*", [&](std::shared_ptr<HttpExchange>) { called = "one"; });
  router.Add("DELETE", "/v1/audio/voices/*", [&](std::shared_ptr<HttpExchange>) { called = "rm"; });
  Router::Match one = router.Find("GET", "/v1/audio/voices/voice_abc");
  ASSERT_NE(one.handler, nullptr);
  (*one.handler)(nullptr);
  EXPECT_EQ(called, "one");
  EXPECT_EQ(one.route, "/v1/audio/voices/*") << "a bounded metrics label, not the id";
  Router::Match list = router.Find("GET", "/v1/audio/voices");
  ASSERT_NE(list.handler, nullptr);
  (*list.handler)(nullptr);
  EXPECT_EQ(called, "list");
  EXPECT_EQ(router.Find("GET", "/v1/audio/voices/").error.status, 404);
  EXPECT_EQ(router.Find("GET", "/v1/audio/voices/a/b").error.status, 404);
  EXPECT_EQ(router.Find("GET", "/v1/audio/voicesX").error.status, 404);
  Router::Match put = router.Find("PUT", "/v1/audio/voices/voice_abc");
  EXPECT_EQ(put.error.status, 405);
  EXPECT_EQ(HeaderOf(put.error, "Allow"), "GET, HEAD, DELETE");
}

TEST(RouterBodyLimit, OneRouteMayTakeALargerBody) {
  Router router;
  router.Add("POST", "/v1/audio/speech", [](std::shared_ptr<HttpExchange>) {});
  router.Add("POST", "/v1/audio/voices", [](std::shared_ptr<HttpExchange>) {});
  router.SetBodyLimit("POST", "/v1/audio/voices", 20 << 20);
  EXPECT_EQ(router.BodyLimit("POST", "/v1/audio/voices", 1 << 20), size_t{20 << 20});
  EXPECT_EQ(router.BodyLimit("POST", "/v1/audio/speech", 1 << 20), size_t{1 << 20});
  EXPECT_EQ(router.BodyLimit("PUT", "/v1/audio/voices", 1 << 20), size_t{1 << 20});
  EXPECT_EQ(router.LargestBodyLimit(1 << 20), size_t{20 << 20});
  EXPECT_EQ(Router().LargestBodyLimit(1 << 20), size_t{1 << 20});
}

}  // namespace
}  // namespace voxserve::transport::http
