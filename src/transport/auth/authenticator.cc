#include "transport/auth/authenticator.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <chrono>

#include "core/error.h"

namespace voxserve::transport::auth {
namespace {

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

bool StartsWithIgnoringCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
  }
  return true;
}

// The key from `Authorization: Bearer <key>` (scheme case-insensitive, RFC 7235), `x-api-key` or
// `xi-api-key` (ElevenLabs).
// An Authorization header of another scheme sets *unsupported.
std::string_view PresentedKey(const HeaderLookup& header, bool* unsupported) {
  std::string_view authorization = Trim(header("authorization"));
  if (!authorization.empty()) {
    if (StartsWithIgnoringCase(authorization, "bearer ")) return Trim(authorization.substr(7));
    *unsupported = true;
    return {};
  }
  std::string_view key = Trim(header("x-api-key"));
  // ElevenLabs' header (https://elevenlabs.io/docs/api-reference/authentication), so its SDKs
  // authenticate with voxserve's keys unchanged.
  return key.empty() ? Trim(header("xi-api-key")) : key;
}

}  // namespace

struct Authenticator::KeySet {
  std::vector<ApiKey> keys;
  std::vector<std::shared_ptr<KeyLimiter>> limiters;  // one per key, same order
};

Authenticator::Authenticator(AuthConfig config, core::MetricsRegistry& registry)
    : config_(std::move(config)),
      failures_(registry.AddCounter("voxserve_auth_failures_total",
                                    "Requests refused with 401, by reason.", {"reason"})),
      key_requests_(registry.AddCounter("voxserve_api_key_requests_total",
                                        "Requests authenticated, by API key name.", {"key"})),
      key_limited_(registry.AddCounter(
          "voxserve_api_key_limited_total",
          "Requests refused with 429 by a key's own limits, by key name and limit (rate or "
          "concurrency).",
          {"key", "limit"})),
      key_count_gauge_(
          registry.AddGauge("voxserve_api_keys", "API keys configured (0: auth is off).")
              .WithLabels({})),
      tokens_minted_(registry.AddCounter("voxserve_access_tokens_minted_total",
                                         "Access tokens minted (POST /v1/tokens), by API key name.",
                                         {"key"})),
      unix_now_([] {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
      }),
      keys_(std::make_shared<KeySet>()) {}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Create(
    const AuthConfig& config, core::MetricsRegistry& registry) {
  std::unique_ptr<Authenticator> authenticator(new Authenticator(config, registry));
  if (config.token_secret_file.empty()) {
    authenticator->token_secret_ = RandomTokenSecret();
  } else {
    auto secret = LoadTokenSecret(config.token_secret_file);
    if (!secret.ok()) return secret.status();
    authenticator->token_secret_ = *secret;
  }
  if (authenticator->enabled()) {
    auto keys = LoadApiKeysFile(config.keys_file);
    if (!keys.ok()) return keys.status();
    if (absl::Status status = authenticator->Install(std::move(*keys)); !status.ok()) {
      return status;
    }
  }
  return authenticator;
}

absl::Status Authenticator::Reload() {
  if (!enabled()) return absl::OkStatus();
  auto keys = LoadApiKeysFile(config_.keys_file);
  if (!keys.ok()) return keys.status();
  return Install(std::move(*keys));
}

absl::Status Authenticator::Install(std::vector<ApiKey> keys) {
  if (keys.empty()) {
    return core::InvalidArgument(config_.keys_file +
                                 " lists no keys; to run without auth, unset auth.keys_file");
  }
  auto next = std::make_shared<KeySet>();
  std::lock_guard lock(mutex_);
  for (const ApiKey& key : keys) {
    std::shared_ptr<KeyLimiter> limiter;
    for (size_t i = 0; i < keys_->keys.size(); ++i) {
      if (keys_->keys[i].name == key.name) limiter = keys_->limiters[i];
    }
    if (!limiter) limiter = std::make_shared<KeyLimiter>();
    limiter->Configure(key.rate_limit, key.max_concurrent);
    next->limiters.push_back(std::move(limiter));
  }
  next->keys = std::move(keys);
  key_count_gauge_.Set(static_cast<double>(next->keys.size()));
  keys_ = std::move(next);
  return absl::OkStatus();
}

std::shared_ptr<const Authenticator::KeySet> Authenticator::Current() const {
  std::lock_guard lock(mutex_);
  return keys_;
}

size_t Authenticator::key_count() const { return Current()->keys.size(); }

absl::Status Authenticator::Fail(const char* reason, std::string_view message,
                                 std::string_view code) const {
  failures_.WithLabels({reason}).Increment();
  return core::Unauthenticated(message, code);
}

absl::StatusOr<AuthResult> Authenticator::Authenticate(const HeaderLookup& header,
                                                       std::string_view client_subject,
                                                       Resource resource) const {
  AuthResult result;
  result.client_subject = std::string(client_subject);
  bool open = !enabled() || resource == Resource::kPage ||
              (resource == Resource::kHealth && !config_.protect_health) ||
              (resource == Resource::kMetrics && !config_.protect_metrics);
  if (open) return result;

  std::shared_ptr<const KeySet> set = Current();
  // Compared as attribute sets: the keys file may list a subject in any order
  // (distinguished_name.h).
  DistinguishedName peer_name;
  if (!client_subject.empty()) {
    auto parsed = DistinguishedName::Parse(client_subject);
    if (parsed.ok()) peer_name = *std::move(parsed);
  }
  bool unsupported = false;
  std::string_view presented = PresentedKey(header, &unsupported);
  if (LooksLikeAccessToken(presented)) {
    auto by_token = AuthenticateToken(presented);
    if (by_token.ok()) by_token->client_subject = result.client_subject;
    return by_token;
  }
  int match = -1;
  if (!presented.empty()) {
    // Every digest is compared, in constant time, so timing says nothing about which key (or how
    // much of one) matched.
    KeyDigest digest = Sha256(presented);
    for (size_t i = 0; i < set->keys.size(); ++i) {
      const std::optional<KeyDigest>& candidate = set->keys[i].digest;
      if (candidate && CRYPTO_memcmp(digest.data(), candidate->data(), digest.size()) == 0) {
        match = static_cast<int>(i);
      }
    }
    if (match < 0) return Fail("invalid_key", "invalid API key", "invalid_api_key");
    const std::string& bound = set->keys[match].client_subject;
    if (!bound.empty() && (peer_name.empty() || set->keys[match].subject_name != peer_name)) {
      return Fail("wrong_client", "this API key is bound to another client certificate",
                  "invalid_api_key");
    }
  } else if (unsupported) {
    return Fail("missing_key", "the Authorization header must be 'Bearer <key>'",
                "missing_api_key");
  } else if (!client_subject.empty()) {
    for (size_t i = 0; i < set->keys.size(); ++i) {
      if (!set->keys[i].digest && !peer_name.empty() && set->keys[i].subject_name == peer_name) {
        match = static_cast<int>(i);
      }
    }
  }
  if (match < 0) {
    return Fail("missing_key",
                "an API key is required: send 'Authorization: Bearer <key>' or 'x-api-key: <key>'",
                "missing_api_key");
  }
  const ApiKey& key = set->keys[match];
  key_requests_.WithLabels({key.name}).Increment();
  result.key_name = key.name;
  result.allowed_models = key.models;
  result.limiter = set->limiters[match];
  return result;
}

absl::StatusOr<AuthResult> Authenticator::AuthenticateToken(std::string_view token) const {
  AuthResult result;
  result.via_token = true;
  if (!enabled()) return result;  // every request is allowed: the token changes nothing
  auto claims = ReadAccessTokenClaims(token);
  if (!claims.ok()) {
    failures_.WithLabels({"invalid_token"}).Increment();
    return claims.status();
  }
  std::shared_ptr<const KeySet> set = Current();
  int match = -1;
  for (size_t i = 0; i < set->keys.size(); ++i) {
    if (set->keys[i].name == claims->key_name) match = static_cast<int>(i);
  }
  if (match < 0 ||
      !AccessTokenSignatureMatches(token, SigningKeyFor(token_secret_, set->keys[match]))) {
    return Fail("invalid_token",
                "invalid access token: its signature does not match (forged, from another "
                "server, or its API key was removed or changed)",
                "invalid_token");
  }
  const int64_t now = unix_now_();
  if (claims->expires_at <= now) {
    return Fail("token_expired",
                "the access token expired " + std::to_string(now - claims->expires_at) +
                    " s ago: mint another with POST /v1/tokens",
                "token_expired");
  }
  const ApiKey& key = set->keys[match];
  std::vector<std::string> models = claims->models;
  if (!models.empty() && !key.models.empty()) {
    // The key may have lost models since the token was minted: the token never has more.
    std::erase_if(models, [&key](const std::string& model) {
      return std::find(key.models.begin(), key.models.end(), model) == key.models.end();
    });
    if (models.empty()) {
      return Fail("invalid_token", "the access token's models are no longer allowed to its key",
                  "invalid_token");
    }
  }
  if (claims->single_use && !Spend(*claims, now)) {
    return Fail("token_used", "this single-use access token was already used", "token_used");
  }
  key_requests_.WithLabels({key.name}).Increment();
  result.key_name = key.name;
  result.allowed_models = models.empty() ? key.models : std::move(models);
  result.limiter = set->limiters[match];
  return result;
}

bool Authenticator::Spend(const TokenClaims& claims, int64_t now) const {
  std::lock_guard lock(spent_mutex_);
  // Expired ids are dropped once the map has doubled since the last sweep: amortized constant
  // work, and memory bounded by the single-use tokens minted within one token lifetime.
  static constexpr size_t kFirstSweep = 1024;
  if (spent_.size() >= std::max(kFirstSweep, 2 * spent_after_sweep_)) {
    std::erase_if(spent_, [now](const auto& entry) { return entry.second <= now; });
    spent_after_sweep_ = spent_.size();
  }
  return spent_.emplace(claims.id, claims.expires_at).second;
}

absl::StatusOr<MintedToken> Authenticator::MintToken(const AuthResult& caller,
                                                     const TokenRequest& request) const {
  if (caller.via_token) {
    return core::PermissionDenied(
        "an access token cannot mint another (it would outlive itself): mint with the API key", {},
        "token_cannot_mint");
  }
  if (request.expires_in_seconds < 1 || request.expires_in_seconds > kMaxTokenLifetimeSeconds) {
    return core::InvalidArgument(
        "expires_in must be 1.." + std::to_string(kMaxTokenLifetimeSeconds) + " seconds",
        "expires_in", "invalid_expires_in");
  }
  for (const std::string& model : request.models) {
    if (!caller.allowed_models.empty() &&
        std::find(caller.allowed_models.begin(), caller.allowed_models.end(), model) ==
            caller.allowed_models.end()) {
      return core::PermissionDenied(
          "API key '" + caller.key_name + "' may not use model " + core::Quoted(model), "models",
          "model_not_allowed");
    }
  }
  ApiKey signer;  // auth off: a token of no key, which only an open server takes
  if (enabled()) {
    std::shared_ptr<const KeySet> set = Current();
    auto found = std::find_if(set->keys.begin(), set->keys.end(),
                              [&caller](const ApiKey& key) { return key.name == caller.key_name; });
    if (found == set->keys.end()) {
      return core::Unauthenticated("API key '" + caller.key_name + "' was just removed",
                                   "invalid_api_key");
    }
    signer = *found;
  }
  MintedToken minted;
  minted.claims.key_name = signer.name;
  minted.claims.expires_at = unix_now_() + request.expires_in_seconds;
  minted.claims.id = RandomTokenId();
  minted.claims.single_use = request.single_use;
  minted.claims.models = request.models;
  minted.token = EncodeAccessToken(minted.claims, SigningKeyFor(token_secret_, signer));
  tokens_minted_.WithLabels({signer.name.empty() ? "none" : signer.name}).Increment();
  return minted;
}

absl::StatusOr<Admission> Authenticator::Admit(const AuthResult& result) const {
  if (!result.limiter) return Admission();
  int retry_after = 1;
  bool concurrency = false;
  if (!result.limiter->TryAcquire(LimiterClock::now(), &retry_after, &concurrency)) {
    key_limited_.WithLabels({result.key_name, concurrency ? "concurrency" : "rate"}).Increment();
    if (concurrency) {
      return core::RateLimited("API key '" + result.key_name +
                                   "' has as many requests running as it may; retry when one ends",
                               "concurrency_limit_exceeded", retry_after);
    }
    return core::RateLimited("API key '" + result.key_name + "' is over its rate limit",
                             "rate_limit_exceeded", retry_after);
  }
  return Admission(result.limiter);
}

}  // namespace voxserve::transport::auth
