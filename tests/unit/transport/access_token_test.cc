// Access tokens (transport/auth/access_token.h) as the authenticator mints and verifies them.
#include "transport/auth/access_token.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/escaping.h"
#include "core/error.h"
#include "transport/auth/authenticator.h"

namespace voxserve::transport::auth {
namespace {

class AccessTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("voxserve-tokens-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    WriteKeys(R"(
keys:
  - {name: alice, key: sk-alice}
  - {name: bob, key: sk-bob, models: [espeak, piper], max_concurrent: 1}
)");
    std::ofstream(dir_ / "secret") << "0123456789abcdef0123456789abcdef0123456789abcdef\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void WriteKeys(const std::string& yaml) { std::ofstream(dir_ / "keys.yaml") << yaml; }

  std::unique_ptr<Authenticator> Make(bool shared_secret = true) {
    AuthConfig config;
    config.keys_file = (dir_ / "keys.yaml").string();
    if (shared_secret) config.token_secret_file = (dir_ / "secret").string();
    auto created = Authenticator::Create(config, registry_);
    EXPECT_TRUE(created.ok()) << created.status();
    if (!created.ok()) return nullptr;
    (*created)->UseClockForTesting([this] { return now_; });
    return std::move(*created);
  }

  static AuthResult As(const Authenticator& auth, const std::string& key) {
    auto result = auth.Authenticate(
        [&key](std::string_view name) -> std::string_view {
          return name == "x-api-key" ? std::string_view(key) : std::string_view();
        },
        {}, Resource::kApi);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : AuthResult{};
  }

  static absl::StatusOr<AuthResult> Bearer(const Authenticator& auth, const std::string& token) {
    std::string header = "Bearer " + token;
    return auth.Authenticate(
        [&header](std::string_view name) -> std::string_view {
          return name == "authorization" ? std::string_view(header) : std::string_view();
        },
        {}, Resource::kApi);
  }

  static std::string Code(const absl::Status& status) { return core::DetailOf(status).code; }

  std::string Mint(const Authenticator& auth, const std::string& key, TokenRequest request = {}) {
    auto minted = auth.MintToken(As(auth, key), request);
    EXPECT_TRUE(minted.ok()) << minted.status();
    return minted.ok() ? minted->token : std::string();
  }

  core::MetricsRegistry registry_;
  std::filesystem::path dir_;
  int64_t now_ = 1'800'000'000;
};

TEST_F(AccessTokenTest, ATokenStandsForItsKeyWithTheKeysLimitsInAHeaderOrAUrl) {
  auto auth = Make();
  std::string token = Mint(*auth, "sk-bob");
  EXPECT_TRUE(token.starts_with("vxt_"));
  auto by_header = Bearer(*auth, token);
  ASSERT_TRUE(by_header.ok()) << by_header.status();
  EXPECT_EQ(by_header->key_name, "bob");
  EXPECT_TRUE(by_header->via_token);
  EXPECT_EQ(by_header->allowed_models, (std::vector<std::string>{"espeak", "piper"}));
  auto by_url = auth->AuthenticateToken(token);
  ASSERT_TRUE(by_url.ok()) << by_url.status();
  // The key's concurrency cap (1) is shared with the key itself: the same limiter.
  auto admitted = auth->Admit(*by_url);
  ASSERT_TRUE(admitted.ok());
  EXPECT_EQ(auth->Admit(As(*auth, "sk-bob")).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST_F(AccessTokenTest, ExpiresAtItsTime) {
  auto auth = Make();
  TokenRequest request;
  request.expires_in_seconds = 60;
  std::string token = Mint(*auth, "sk-alice", request);
  now_ += 59;
  EXPECT_TRUE(auth->AuthenticateToken(token).ok());
  now_ += 1;
  auto expired = auth->AuthenticateToken(token);
  EXPECT_EQ(expired.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Code(expired.status()), "token_expired");
}

TEST_F(AccessTokenTest, ASingleUseTokenIsTakenOnce) {
  auto auth = Make();
  TokenRequest request;
  request.single_use = true;
  std::string token = Mint(*auth, "sk-alice", request);
  EXPECT_TRUE(auth->AuthenticateToken(token).ok());
  EXPECT_EQ(Code(auth->AuthenticateToken(token).status()), "token_used");
  EXPECT_EQ(Code(Bearer(*auth, token).status()), "token_used");
  // Another token of the same key is its own.
  EXPECT_TRUE(auth->AuthenticateToken(Mint(*auth, "sk-alice", request)).ok());
}

TEST_F(AccessTokenTest, SpentTokensAreForgottenOnlyAfterTheyExpire) {
  auto auth = Make();
  TokenRequest request;
  request.single_use = true;
  request.expires_in_seconds = 10;
  std::string first = Mint(*auth, "sk-alice", request);
  ASSERT_TRUE(auth->AuthenticateToken(first).ok());
  // Enough spent tokens to sweep several times; the first stays refused while it lives.
  for (int i = 0; i < 5000; ++i)
    ASSERT_TRUE(auth->AuthenticateToken(Mint(*auth, "sk-alice", request)).ok());
  EXPECT_EQ(Code(auth->AuthenticateToken(first).status()), "token_used");
}

TEST_F(AccessTokenTest, ATokenDiesWithItsKeyRemovedOrRotated) {
  auto auth = Make();
  std::string alice = Mint(*auth, "sk-alice");
  std::string bob = Mint(*auth, "sk-bob");
  WriteKeys(R"(
keys:
  - {name: alice, key: sk-alice-rotated}
)");
  ASSERT_TRUE(auth->Reload().ok());
  EXPECT_EQ(Code(auth->AuthenticateToken(alice).status()), "invalid_token");  // rotated
  EXPECT_EQ(Code(auth->AuthenticateToken(bob).status()), "invalid_token");    // removed
}

TEST_F(AccessTokenTest, ReplicasSharingTheSecretVerifyEachOthersTokensAndOthersDoNot) {
  auto minter = Make();
  auto replica = Make();
  auto stranger = Make(/*shared_secret=*/false);
  std::string token = Mint(*minter, "sk-alice");
  EXPECT_TRUE(replica->AuthenticateToken(token).ok());
  EXPECT_EQ(Code(stranger->AuthenticateToken(token).status()), "invalid_token");
}

TEST_F(AccessTokenTest, AlteredOrMalformedTokensAreRefused) {
  auto auth = Make();
  std::string token = Mint(*auth, "sk-bob");
  auto claims = ReadAccessTokenClaims(token);
  ASSERT_TRUE(claims.ok());
  // The same claims with a longer life and no model limit, under the old signature.
  TokenClaims widened = *claims;
  widened.expires_at += 86400;
  widened.models.clear();
  std::string forged = EncodeAccessToken(widened, SigningKey{});
  forged = forged.substr(0, forged.find('.')) + token.substr(token.find('.'));
  EXPECT_EQ(Code(auth->AuthenticateToken(forged).status()), "invalid_token");
  for (std::string bad :
       {std::string("vxt_"), std::string("vxt_a.b.c"), std::string("vxt_%%%.x"),
        "vxt_" + absl::WebSafeBase64Escape("[1]") + ".x",
        "vxt_" + absl::WebSafeBase64Escape(R"({"k":1})") + ".x", std::string(5000, 'v')}) {
    auto result = auth->AuthenticateToken(bad);
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnauthenticated) << bad;
  }
}

TEST_F(AccessTokenTest, MintingChecksLifetimeModelsAndRefusesTokensMintingTokens) {
  auto auth = Make();
  TokenRequest request;
  request.expires_in_seconds = kMaxTokenLifetimeSeconds + 1;
  EXPECT_EQ(Code(auth->MintToken(As(*auth, "sk-alice"), request).status()), "invalid_expires_in");
  request.expires_in_seconds = 0;
  EXPECT_EQ(Code(auth->MintToken(As(*auth, "sk-alice"), request).status()), "invalid_expires_in");

  request = {};
  request.models = {"kokoro"};
  auto not_allowed = auth->MintToken(As(*auth, "sk-bob"), request);
  EXPECT_EQ(not_allowed.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(Code(not_allowed.status()), "model_not_allowed");
  request.models = {"piper"};
  auto narrowed = auth->AuthenticateToken(Mint(*auth, "sk-bob", request));
  ASSERT_TRUE(narrowed.ok());
  EXPECT_EQ(narrowed->allowed_models, (std::vector<std::string>{"piper"}));

  auto by_token = Bearer(*auth, Mint(*auth, "sk-alice"));
  ASSERT_TRUE(by_token.ok());
  EXPECT_EQ(Code(auth->MintToken(*by_token, {}).status()), "token_cannot_mint");
}

TEST_F(AccessTokenTest, ATokensModelsNeverOutgrowItsKeys) {
  auto auth = Make();
  TokenRequest request;
  request.models = {"piper"};
  std::string token = Mint(*auth, "sk-bob", request);
  WriteKeys(R"(
keys:
  - {name: bob, key: sk-bob, models: [espeak]}
)");
  ASSERT_TRUE(auth->Reload().ok());
  EXPECT_EQ(Code(auth->AuthenticateToken(token).status()), "invalid_token");
}

TEST_F(AccessTokenTest, ASecretFileTooShortIsNamed) {
  std::ofstream(dir_ / "secret") << "short\n";
  AuthConfig config;
  config.keys_file = (dir_ / "keys.yaml").string();
  config.token_secret_file = (dir_ / "secret").string();
  auto created = Authenticator::Create(config, registry_);
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("at least 32"), std::string_view::npos);
}

TEST_F(AccessTokenTest, WithAuthOffTokensAreMintedAndChangeNothing) {
  auto created = Authenticator::Create({}, registry_);
  ASSERT_TRUE(created.ok());
  auto minted = (*created)->MintToken({}, {});
  ASSERT_TRUE(minted.ok()) << minted.status();
  auto result = (*created)->AuthenticateToken(minted->token);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->key_name, "");
  EXPECT_TRUE((*created)->AuthenticateToken("vxt_garbage").ok());  // nothing is checked
}

}  // namespace
}  // namespace voxserve::transport::auth
