#include "transport/auth/authenticator.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.h"

namespace voxserve::transport::auth {
namespace {

class AuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("voxserve-keys-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml");
    WriteKeys(R"(
keys:
  - {name: alice, key: sk-alice}
  - {name: bob, key: sk-bob, models: [espeak], max_concurrent: 1}
  - {name: carol, key: sk-carol, rate_limit: {requests_per_second: 1, burst: 1}}
  - {name: cert-only, client_subject: "CN=service-a"}
  - {name: bound, key: sk-bound, client_subject: "CN=service-b"}
)");
  }
  void TearDown() override { std::filesystem::remove(path_); }

  void WriteKeys(const std::string& yaml) { std::ofstream(path_) << yaml; }

  std::unique_ptr<Authenticator> Make(AuthConfig config = {}) {
    config.keys_file = path_.string();
    auto created = Authenticator::Create(config, registry_);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? std::move(*created) : nullptr;
  }

  absl::StatusOr<AuthResult> Call(const Authenticator& auth,
                                  std::map<std::string, std::string> headers,
                                  std::string subject = {}, Resource resource = Resource::kApi) {
    return auth.Authenticate(
        [&headers](std::string_view name) -> std::string_view {
          auto it = headers.find(std::string(name));
          return it == headers.end() ? std::string_view() : std::string_view(it->second);
        },
        subject, resource);
  }

  std::string Code(const absl::Status& status) { return core::DetailOf(status).code; }

  core::MetricsRegistry registry_;
  std::filesystem::path path_;
};

TEST_F(AuthenticatorTest, WithoutAKeysFileEveryoneIsAllowed) {
  auto created = Authenticator::Create({}, registry_);
  ASSERT_TRUE(created.ok());
  EXPECT_FALSE((*created)->enabled());
  auto result = Call(**created, {}, "CN=x");
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->key_name.empty());
  EXPECT_EQ(result->client_subject, "CN=x");
  EXPECT_TRUE((*created)->Admit(*result).ok());
}

TEST_F(AuthenticatorTest, BearerAndXApiKeyBothWork) {
  auto auth = Make();
  for (auto headers :
       std::vector<std::map<std::string, std::string>>{{{"authorization", "Bearer sk-alice"}},
                                                       {{"authorization", "bearer   sk-alice  "}},
                                                       {{"x-api-key", "sk-alice"}}}) {
    auto result = Call(*auth, headers);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->key_name, "alice");
  }
}

TEST_F(AuthenticatorTest, MissingWrongOrMalformedCredentialsAre401) {
  auto auth = Make();
  struct Case {
    std::map<std::string, std::string> headers;
    const char* code;
  };
  for (const Case& c :
       {Case{{}, "missing_api_key"},
        Case{{{"authorization", "Bearer sk-alicE"}}, "invalid_api_key"},
        Case{{{"x-api-key", "sk-alice "}, {"authorization", "Basic abc"}}, "missing_api_key"},
        Case{{{"authorization", "Bearer"}}, "missing_api_key"}}) {
    auto result = Call(*auth, c.headers);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(Code(result.status()), c.code);
  }
  std::string text = registry_.RenderText();
  EXPECT_NE(text.find("voxserve_auth_failures_total{reason=\"missing_key\"} 3"), std::string::npos)
      << text;
  EXPECT_NE(text.find("voxserve_auth_failures_total{reason=\"invalid_key\"} 1"), std::string::npos);
}

TEST_F(AuthenticatorTest, HealthAndMetricsAreOpenUnlessProtected) {
  auto open = Make();
  EXPECT_TRUE(Call(*open, {}, {}, Resource::kHealth).ok());
  EXPECT_TRUE(Call(*open, {}, {}, Resource::kMetrics).ok());
  auto closed = Make({.protect_health = true, .protect_metrics = true});
  EXPECT_FALSE(Call(*closed, {}, {}, Resource::kHealth).ok());
  EXPECT_FALSE(Call(*closed, {}, {}, Resource::kMetrics).ok());
  EXPECT_TRUE(Call(*closed, {{"x-api-key", "sk-alice"}}, {}, Resource::kMetrics).ok());
}

TEST_F(AuthenticatorTest, PlaygroundPagesAreOpenEvenWhenEverythingElseIsProtected) {
  auto closed = Make({.protect_health = true, .protect_metrics = true});
  EXPECT_TRUE(Call(*closed, {}, {}, Resource::kPage).ok());
  EXPECT_FALSE(Call(*closed, {}, {}, Resource::kApi).ok());
}

TEST_F(AuthenticatorTest, ClientCertificateSubjects) {
  auto auth = Make();
  auto by_cert = Call(*auth, {}, "CN=service-a");
  ASSERT_TRUE(by_cert.ok()) << by_cert.status();
  EXPECT_EQ(by_cert->key_name, "cert-only");
  EXPECT_FALSE(Call(*auth, {}, "CN=someone-else").ok());
  // A key bound to a certificate needs both.
  EXPECT_TRUE(Call(*auth, {{"x-api-key", "sk-bound"}}, "CN=service-b").ok());
  auto stolen = Call(*auth, {{"x-api-key", "sk-bound"}}, "CN=service-a");
  ASSERT_FALSE(stolen.ok());
  EXPECT_EQ(stolen.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_FALSE(Call(*auth, {{"x-api-key", "sk-bound"}}).ok());
}

TEST_F(AuthenticatorTest, SubjectsMatchWhateverOrderTheKeysFileListsThem) {
  WriteKeys(R"(
keys:
  - {name: written, client_subject: "CN=service-a,O=Example"}
  - {name: bound, key: sk-bound, client_subject: "CN=service-b, O=Example"}
)");
  auto auth = Make();
  // As OpenSSL prints a verified certificate's subject (RFC 2253: last RDN first).
  auto by_cert = Call(*auth, {}, "O=Example,CN=service-a");
  ASSERT_TRUE(by_cert.ok()) << by_cert.status();
  EXPECT_EQ(by_cert->key_name, "written");
  EXPECT_TRUE(Call(*auth, {{"x-api-key", "sk-bound"}}, "O=Example,CN=service-b").ok());
  EXPECT_FALSE(Call(*auth, {}, "CN=service-a").ok());  // a subset is another certificate
  EXPECT_FALSE(Call(*auth, {{"x-api-key", "sk-bound"}}, "O=Example,CN=service-a").ok());
}

TEST_F(AuthenticatorTest, ResultCarriesTheKeysModels) {
  auto auth = Make();
  auto bob = Call(*auth, {{"x-api-key", "sk-bob"}});
  ASSERT_TRUE(bob.ok());
  EXPECT_EQ(bob->allowed_models, std::vector<std::string>{"espeak"});
}

TEST_F(AuthenticatorTest, AdmitEnforcesRateAndConcurrencyWith429) {
  auto auth = Make();
  auto carol = Call(*auth, {{"x-api-key", "sk-carol"}});
  ASSERT_TRUE(carol.ok());
  ASSERT_TRUE(auth->Admit(*carol).ok());
  auto limited = auth->Admit(*carol);
  ASSERT_FALSE(limited.ok());
  EXPECT_EQ(limited.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(Code(limited.status()), "rate_limit_exceeded");
  EXPECT_EQ(core::DetailOf(limited.status()).retry_after_seconds, 1);

  auto bob = Call(*auth, {{"x-api-key", "sk-bob"}});
  ASSERT_TRUE(bob.ok());
  auto first = auth->Admit(*bob);
  ASSERT_TRUE(first.ok());
  auto second = auth->Admit(*bob);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(Code(second.status()), "concurrency_limit_exceeded");
  first->Reset();
  EXPECT_TRUE(auth->Admit(*bob).ok());
  std::string text = registry_.RenderText();
  EXPECT_NE(text.find("voxserve_api_key_limited_total{key=\"carol\",limit=\"rate\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("voxserve_api_key_limited_total{key=\"bob\",limit=\"concurrency\"} 1"),
            std::string::npos);
}

TEST_F(AuthenticatorTest, ReloadSwapsKeysKeepsLimiterStateAndRefusesBadFiles) {
  auto auth = Make();
  auto bob = Call(*auth, {{"x-api-key", "sk-bob"}});
  ASSERT_TRUE(bob.ok());
  auto running = auth->Admit(*bob);
  ASSERT_TRUE(running.ok());

  WriteKeys("keys: [{name: bob, key: sk-bob-2, max_concurrent: 1}, {name: dan, key: sk-dan}]");
  ASSERT_TRUE(auth->Reload().ok());
  EXPECT_FALSE(Call(*auth, {{"x-api-key", "sk-alice"}}).ok());
  EXPECT_FALSE(Call(*auth, {{"x-api-key", "sk-bob"}}).ok());
  auto new_bob = Call(*auth, {{"x-api-key", "sk-bob-2"}});
  ASSERT_TRUE(new_bob.ok());
  EXPECT_FALSE(auth->Admit(*new_bob).ok()) << "the request admitted before the reload still runs";
  EXPECT_EQ(auth->key_count(), 2u);

  WriteKeys("keys: []");
  EXPECT_FALSE(auth->Reload().ok());  // would turn auth off
  WriteKeys("not: [valid");
  EXPECT_FALSE(auth->Reload().ok());
  EXPECT_TRUE(Call(*auth, {{"x-api-key", "sk-dan"}}).ok());
}

TEST_F(AuthenticatorTest, AKeysFileWithoutKeysIsAStartupError) {
  WriteKeys("keys: []");
  AuthConfig config;
  config.keys_file = path_.string();
  auto created = Authenticator::Create(config, registry_);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(std::string(created.status().message()).find("no keys"), std::string::npos);
}

}  // namespace
}  // namespace voxserve::transport::auth
