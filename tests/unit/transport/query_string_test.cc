#include "transport/http/query_string.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.h"

namespace voxserve::transport::http {
namespace {

using Params = std::map<std::string, std::string>;

TEST(ParseQuery, SplitsPairsAndDecodesPercentEscapes) {
  auto params = ParseQuery("language=%65%6E&model=tts-1");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(*params, (Params{{"language", "en"}, {"model", "tts-1"}}));
}

TEST(ParseQuery, DecodesNamesPlusAsSpaceAndUtf8) {
  auto params = ParseQuery("na%6De=a+b%20c&x=%E4%BD%A0");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(*params, (Params{{"name", "a b c"}, {"x", "\xE4\xBD\xA0"}}));
}

TEST(ParseQuery, EmptyPiecesAndMissingValues) {
  auto params = ParseQuery("&a&&b=&");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(*params, (Params{{"a", ""}, {"b", ""}}));
  auto none = ParseQuery("");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

TEST(ParseQuery, TheLastOfARepeatedNameCounts) {
  auto params = ParseQuery("a=1&a=2");
  ASSERT_TRUE(params.ok()) << params.status();
  EXPECT_EQ(*params, (Params{{"a", "2"}}));
}

TEST(ParseQuery, RejectsInvalidEscapesNamingTheParameter) {
  for (const char* query : {"language=%zz", "language=%6", "language=%", "language=%%41"}) {
    auto params = ParseQuery(query);
    ASSERT_FALSE(params.ok()) << query;
    EXPECT_EQ(params.status().code(), absl::StatusCode::kInvalidArgument);
    core::ErrorDetail detail = core::DetailOf(params.status());
    EXPECT_EQ(detail.code, "invalid_query");
    EXPECT_EQ(detail.param, "language") << query;
  }
  EXPECT_EQ(core::DetailOf(ParseQuery("%g1=x").status()).code, "invalid_query");
}

}  // namespace
}  // namespace voxserve::transport::http
