#include "transport/http/playground_routes.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace voxserve::transport::http {
namespace {

std::optional<std::string> HeaderOf(const HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

constexpr EmbeddedFile kScript{"app.js", "console.log(1);", "\"0123abcd\""};

TEST(PlaygroundRoutesTest, AFileIsServedWithItsTypeValidatorAndSecurityHeaders) {
  HttpResponse response = StaticFileResponse(kScript, "");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "console.log(1);");
  EXPECT_EQ(HeaderOf(response, "Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(HeaderOf(response, "ETag"), "\"0123abcd\"");
  EXPECT_EQ(HeaderOf(response, "Cache-Control"), "no-cache");
  EXPECT_EQ(HeaderOf(response, "X-Content-Type-Options"), "nosniff");
  std::string csp = HeaderOf(response, "Content-Security-Policy").value_or("");
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'self';"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
}

TEST(PlaygroundRoutesTest, AMatchingIfNoneMatchGetsAnEmpty304) {
  for (const char* header : {"\"0123abcd\"", "W/\"0123abcd\"", "\"old\", \"0123abcd\"", "*"}) {
    HttpResponse response = StaticFileResponse(kScript, header);
    EXPECT_EQ(response.status, 304) << header;
    EXPECT_TRUE(response.body.empty()) << header;
    EXPECT_EQ(HeaderOf(response, "ETag"), "\"0123abcd\"") << header;
  }
}

TEST(PlaygroundRoutesTest, AnotherETagGetsTheFile) {
  EXPECT_EQ(StaticFileResponse(kScript, "\"0123abce\"").status, 200);
  EXPECT_EQ(StaticFileResponse(kScript, "0123abcd").status, 200);  // unquoted: not an ETag
}

TEST(PlaygroundRoutesTest, ContentTypesFollowTheExtension) {
  EXPECT_EQ(ContentTypeFor("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("style.css"), "text/css; charset=utf-8");
  EXPECT_EQ(ContentTypeFor("favicon.svg"), "image/svg+xml");
  EXPECT_EQ(ContentTypeFor("notes"), "application/octet-stream");
  EXPECT_EQ(ContentTypeFor("archive.js.gz"), "application/octet-stream");
}

TEST(PlaygroundRoutesTest, IndexIsTheRootAndOtherFilesLiveUnderPlayground) {
  static constexpr EmbeddedFile kFiles[] = {{"index.html", "<!doctype html>", "\"1\""},
                                            {"app.js", "", "\"2\""}};
  Router router;
  AddPlaygroundRoutes(router, kFiles);
  Router::Match root = router.Find("GET", "/");
  ASSERT_NE(root.handler, nullptr);
  EXPECT_EQ(root.resource, auth::Resource::kPage);
  EXPECT_NE(router.Find("HEAD", "/playground/app.js").handler, nullptr);
  EXPECT_EQ(router.Find("GET", "/playground/index.html").handler, nullptr);
  Router::Match missing = router.Find("GET", "/playground/nope.js");
  EXPECT_EQ(missing.handler, nullptr);
  EXPECT_EQ(missing.error.status, 404);
  EXPECT_EQ(router.Find("POST", "/").error.status, 405);
}

TEST(PlaygroundRoutesTest, TheEmbeddedPageIsInTheBinary) {
  bool index = false;
  for (const EmbeddedFile& file : PlaygroundFiles()) {
    if (file.path == "index.html") index = file.bytes.starts_with("<!doctype html>");
    EXPECT_EQ(file.etag.size(), 22u) << file.path;  // 20 hex digits in quotes
  }
  EXPECT_TRUE(index);
}

}  // namespace
}  // namespace voxserve::transport::http
