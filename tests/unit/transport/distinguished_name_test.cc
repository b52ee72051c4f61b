#include "transport/auth/distinguished_name.h"

#include <gtest/gtest.h>

namespace voxserve::transport::auth {
namespace {

DistinguishedName Dn(std::string_view text) {
  auto parsed = DistinguishedName::Parse(text);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  return parsed.ok() ? *parsed : DistinguishedName();
}

TEST(DistinguishedNameTest, TheOrderPeopleWriteMatchesTheOrderOpenSslPrints) {
  EXPECT_EQ(Dn("CN=service-a,O=Example"), Dn("O=Example,CN=service-a"));
  EXPECT_EQ(Dn("CN=service-a, O=Example, C=DE"), Dn("C=DE,O=Example,CN=service-a"));
  EXPECT_EQ(Dn("cn=service-a;o=Example"), Dn("CN=service-a,O=Example"));
  EXPECT_EQ(Dn("CN=a+OU=b,O=c"), Dn("O=c,OU=b,CN=a"));
}

TEST(DistinguishedNameTest, EveryAttributeMustMatchExactly) {
  EXPECT_NE(Dn("CN=service-a"), Dn("CN=service-a,O=Example"));  // no subset matches
  EXPECT_NE(Dn("CN=service-a,O=Example"), Dn("CN=service-a,O=Other"));
  EXPECT_NE(Dn("CN=Service-A"), Dn("CN=service-a"));  // values are compared as given
  EXPECT_NE(Dn("CN=a,CN=a"), Dn("CN=a"));             // a multiset, not a set
}

TEST(DistinguishedNameTest, EscapesAreDecodedSoEitherSpellingMatches) {
  EXPECT_EQ(Dn("CN=Doe\\, John,O=Example"), Dn("O=Example,CN=Doe\\2C John"));
  EXPECT_NE(Dn("CN=Doe\\, John"), Dn("CN=Doe,CN=John"));
  EXPECT_EQ(Dn("CN=trailing\\ "), Dn("CN=trailing\\20"));
  EXPECT_NE(Dn("CN=trailing\\ "), Dn("CN=trailing"));
}

TEST(DistinguishedNameTest, MalformedNamesAreErrors) {
  for (const char* text : {"service-a", "CN=a,", ",CN=a", "=a", "CN=a\\", "CN=a,,O=b"}) {
    EXPECT_FALSE(DistinguishedName::Parse(text).ok()) << text;
  }
}

}  // namespace
}  // namespace voxserve::transport::auth
