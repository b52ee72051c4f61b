#include "transport/auth/api_keys_file.h"

#include <gtest/gtest.h>

namespace voxserve::transport::auth {
namespace {

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(ApiKeysFileTest, ReadsEveryFieldOfAFullEntry) {
  auto keys = ParseApiKeys(R"(
keys:
  - name: alice
    key: sk-alice
    rate_limit: {requests_per_second: 2.5, burst: 10}
    max_concurrent: 3
    models: [espeak, kokoro]
    client_subject: "CN=alice,O=Example"
)",
                           "keys.yaml");
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 1u);
  const ApiKey& key = keys->front();
  EXPECT_EQ(key.name, "alice");
  EXPECT_EQ(key.digest, Sha256("sk-alice"));
  ASSERT_TRUE(key.rate_limit.has_value());
  EXPECT_DOUBLE_EQ(key.rate_limit->requests_per_second, 2.5);
  EXPECT_DOUBLE_EQ(key.rate_limit->burst, 10);
  EXPECT_EQ(key.max_concurrent, 3);
  EXPECT_EQ(key.models, (std::vector<std::string>{"espeak", "kokoro"}));
  EXPECT_EQ(key.client_subject, "CN=alice,O=Example");
}

TEST(ApiKeysFileTest, Sha256EntryMatchesThePlainKeysDigest) {
  // sha256("sk-bob"), as `printf %s sk-bob | sha256sum` prints it.
  auto keys = ParseApiKeys(
      "keys: [{name: bob, sha256: "
      "\"36c76b48bb2ee1d9d37140550e9d7ed7d395cf56f41050dc2a72e5291c0011f0\"}]",
      "keys.yaml");
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_TRUE(keys->front().digest.has_value());
  EXPECT_EQ(keys->front().digest, Sha256("sk-bob"));
  EXPECT_FALSE(keys->front().rate_limit.has_value());
  EXPECT_TRUE(keys->front().models.empty());
}

TEST(ApiKeysFileTest, BurstDefaultsToOneSecondOfRate) {
  auto keys = ParseApiKeys("keys: [{name: a, key: k, rate_limit: {requests_per_second: 5}}]", "f");
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_DOUBLE_EQ(keys->front().rate_limit->burst, 5);
}

TEST(ApiKeysFileTest, ErrorsNameTheEntryAndTheField) {
  struct Case {
    const char* yaml;
    const char* expected;
  };
  for (const Case& c : {
           Case{"keys: [{key: k}]", "keys[0].name"},
           Case{"keys: [{name: \"has space\", key: k}]", "keys[0].name"},
           Case{"keys: [{name: a}]", "needs key, sha256 or client_subject"},
           Case{"keys: [{name: a, key: k, sha256: abc}]", "not both"},
           Case{"keys: [{name: a, sha256: abc}]", "keys[0].sha256"},
           Case{"keys: [{name: a, key: k}, {name: a, key: j}]", "keys[1].name"},
           Case{"keys: [{name: a, key: k}, {name: b, key: k}]", "same secret"},
           Case{"keys: [{name: a, key: k, max_concurrent: 0}]", "keys[0].max_concurrent"},
           Case{"keys: [{name: a, key: k, rate_limit: 5}]", "keys[0].rate_limit"},
           Case{"keys: [{name: a, key: k, models: espeak}]", "keys[0].models"},
           Case{"users: []", "under 'keys'"},
           Case{"keys: [ {name: broken", "not valid YAML"},
           Case{"keys:\n  - name: a\n    key: k\n    max_concurent: 4\n",
                "keys[0].max_concurent: unknown key (did you mean max_concurrent?) (line 4)"},
           Case{"keys: [{name: a, key: k, rate_limit: {requests_per_secnd: 2}}]",
                "keys[0].rate_limit.requests_per_secnd: unknown key (did you mean "
                "requests_per_second?)"},
           Case{"keys: [{name: a, key: k}]\nextra: 1\n", "extra: unknown key (known keys: keys)"},
           Case{"keys: [{name: a, client_subject: service-a}]",
                "keys[0].client_subject: 'service-a' is not a distinguished name"},
           Case{"keys: [{name: a, client_subject: {CN: a}}]",
                "keys[0].client_subject: expected a single value, got a mapping"},
       }) {
    auto keys = ParseApiKeys(c.yaml, "keys.yaml");
    ASSERT_FALSE(keys.ok()) << c.yaml;
    EXPECT_NE(Message(keys.status()).find(c.expected), std::string::npos)
        << c.yaml << " → " << keys.status();
    EXPECT_EQ(Message(keys.status()).rfind("keys.yaml", 0), 0u) << keys.status();
  }
}

TEST(ApiKeysFileTest, ErrorsNeverQuoteTheSecret) {
  auto keys = ParseApiKeys("keys: [{name: a, key: sk-secret-1}, {name: b, key: sk-secret-1}]", "f");
  ASSERT_FALSE(keys.ok());
  EXPECT_EQ(Message(keys.status()).find("sk-secret-1"), std::string::npos);
}

TEST(ApiKeysFileTest, MissingFileIsAnError) {
  auto keys = LoadApiKeysFile("/nonexistent/voxserve-keys.yaml");
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(Message(keys.status()).find("/nonexistent/voxserve-keys.yaml"), std::string::npos);
}

}  // namespace
}  // namespace voxserve::transport::auth
