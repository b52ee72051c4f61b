// How HTTP and JSON requests ask for the response cache and text normalization: Cache-Control
// (and Pragma) into a CachePolicy, the CacheResult into X-Cache, apply_text_normalization into
// the request's override.
#include "transport/http/cache_headers.h"

#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "transport/http/text_normalization_field.h"

namespace voxserve::transport::http {
namespace {

using service::CachePolicy;
using service::CacheResult;

HttpRequest WithHeaders(std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest request;
  request.headers = std::move(headers);
  return request;
}

TEST(CachePolicyOf, ReadsCacheControlDirectives) {
  EXPECT_EQ(CachePolicyOf(WithHeaders({})), CachePolicy::kUse);
  EXPECT_EQ(CachePolicyOf(WithHeaders({{"cache-control", "no-cache"}})), CachePolicy::kRefresh);
  EXPECT_EQ(CachePolicyOf(WithHeaders({{"cache-control", "No-Store"}})), CachePolicy::kBypass);
  EXPECT_EQ(CachePolicyOf(WithHeaders({{"cache-control", "max-age=0"}})), CachePolicy::kRefresh);
  EXPECT_EQ(CachePolicyOf(WithHeaders({{"cache-control", "max-age=60"}})), CachePolicy::kUse);
  EXPECT_EQ(CachePolicyOf(WithHeaders({{"cache-control", "private, no-store, no-cache"}})),
            CachePolicy::kBypass);
}

TEST(CachePolicyOf, SeveralLinesAreOneListAndTheStrictestWins) {
  EXPECT_EQ(
      CachePolicyOf(WithHeaders({{"cache-control", "no-store"}, {"cache-control", "max-age=5"}})),
      CachePolicy::kBypass);
  EXPECT_EQ(
      CachePolicyOf(WithHeaders({{"cache-control", "max-age=5"}, {"cache-control", "no-cache"}})),
      CachePolicy::kRefresh);
}

TEST(CachePolicyOf, PragmaCountsOnlyWithoutCacheControl) {
  EXPECT_EQ(CachePolicyOf(WithHeaders({{"pragma", "no-cache"}})), CachePolicy::kRefresh);
  EXPECT_EQ(CachePolicyOf(WithHeaders({{"pragma", "no-cache"}, {"cache-control", "max-age=5"}})),
            CachePolicy::kUse);
}

TEST(SetCacheHeader, SaysHitMissOrBypassAndNothingWhileTheCacheIsOff) {
  auto header = [](CacheResult result) -> std::optional<std::string> {
    HttpResponse response;
    SetCacheHeader(response, result);
    for (const auto& [name, value] : response.headers) {
      if (name == "X-Cache") return value;
    }
    return std::nullopt;
  };
  EXPECT_EQ(header(CacheResult::kHit), "hit");
  EXPECT_EQ(header(CacheResult::kMiss), "miss");
  EXPECT_EQ(header(CacheResult::kBypass), "bypass");
  EXPECT_EQ(header(CacheResult::kOff), std::nullopt);
}

TEST(ParseTextNormalization, TakesElevenLabsValuesAndBooleans) {
  auto parse = [](const nlohmann::json& value) { return ParseTextNormalization(&value); };
  EXPECT_EQ(*ParseTextNormalization(nullptr), std::nullopt);
  EXPECT_EQ(*parse(nullptr), std::nullopt);
  EXPECT_EQ(*parse("auto"), std::nullopt);
  EXPECT_EQ(*parse("on"), std::optional<bool>(true));
  EXPECT_EQ(*parse("off"), std::optional<bool>(false));
  EXPECT_EQ(*parse(true), std::optional<bool>(true));
  EXPECT_EQ(*parse(false), std::optional<bool>(false));
  for (const nlohmann::json& bad : {nlohmann::json("ON"), nlohmann::json(1), nlohmann::json("")}) {
    auto parsed = parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("apply_text_normalization"), std::string::npos);
  }
}

}  // namespace
}  // namespace voxserve::transport::http
