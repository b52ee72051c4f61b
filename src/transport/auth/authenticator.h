// Who is calling, and may they: API keys (Authorization: Bearer or x-api-key, compared in
// constant time by their SHA-256), an optional verified client certificate subject (mTLS), per-key
// model lists, rate limits and concurrency caps. Transport-neutral: HTTP, WebSocket and gRPC hand
// in a header lookup and the connection's client subject and map the Status they get back.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/metrics.h"
#include "transport/auth/access_token.h"
#include "transport/auth/api_keys_file.h"
#include "transport/auth/auth_config.h"
#include "transport/auth/key_limiter.h"

namespace voxserve::transport::auth {

// What a route exposes; decides whether it needs a key. kPage (the playground's static files,
// the same for everyone) is always open: the page must load to ask for a key.
enum class Resource { kApi, kHealth, kMetrics, kPage };

// A header's first value by lowercase name (gRPC metadata keys are lowercase too); empty if absent.
using HeaderLookup = std::function<std::string_view(std::string_view lowercase_name)>;

struct AuthResult {
  std::string key_name;        // empty: auth is off, or an open resource was reached keyless
  std::string client_subject;  // the verified client certificate's subject, if any
  std::vector<std::string> allowed_models;  // empty = every model
  std::shared_ptr<KeyLimiter> limiter;      // null when key_name is empty
  bool via_token = false;  // an access token stood for the key (it may not mint another)
};

// POST /v1/tokens: what the caller asks of a token.
struct TokenRequest {
  int64_t expires_in_seconds = 300;
  bool single_use = false;
  std::vector<std::string> models;  // empty: the key's models
};

struct MintedToken {
  std::string token;
  TokenClaims claims;
};

inline constexpr int64_t kMaxTokenLifetimeSeconds = 3600;

// Authenticate/Admit are safe cross thread, also while Reload runs on another thread.
class Authenticator {
 public:
  // Reads the keys file when one is configured; a file without keys is an error (auth would be
  // silently off). The registry must outlive the authenticator.
  static absl::StatusOr<std::unique_ptr<Authenticator>> Create(const AuthConfig& config,
                                                               core::MetricsRegistry& registry);

  bool enabled() const { return !config_.keys_file.empty(); }
  size_t key_count() const;

  // 401 (Unauthenticated) without a usable credential or with a wrong one. `client_subject` is
  // the subject of a client certificate the TLS layer verified, or empty. An access token is
  // taken wherever a key is.
  absl::StatusOr<AuthResult> Authenticate(const HeaderLookup& header,
                                          std::string_view client_subject, Resource resource) const;

  // An access token from elsewhere than a header (a WebSocket URL's query): 401 invalid_token,
  // token_expired or token_used when it does not stand for a key now.
  absl::StatusOr<AuthResult> AuthenticateToken(std::string_view token) const;

  // A token standing for the caller's key. 403 when the caller came with a token, or asks for a
  // model its key may not use; 400 for a lifetime outside 1..kMaxTokenLifetimeSeconds.
  absl::StatusOr<MintedToken> MintToken(const AuthResult& caller,
                                        const TokenRequest& request) const;

  // Unix seconds now; tests replace it to reach an expiry without waiting.
  void UseClockForTesting(std::function<int64_t()> unix_now) { unix_now_ = std::move(unix_now); }

  // For a request that does work: the key's token bucket and concurrency cap, 429 with
  // Retry-After when over either. The Admission holds the slot until it is destroyed.
  absl::StatusOr<Admission> Admit(const AuthResult& result) const;

  // Re-reads the keys file. A bad file (or one without keys) leaves the current keys in force and
  // returns why. Limiter state carries over for keys that keep their name.
  absl::Status Reload();

 private:
  struct KeySet;
  Authenticator(AuthConfig config, core::MetricsRegistry& registry);
  absl::Status Install(std::vector<ApiKey> keys);
  std::shared_ptr<const KeySet> Current() const;
  absl::Status Fail(const char* reason, std::string_view message, std::string_view code) const;
  // Marks a single-use token spent; false if it already was.
  bool Spend(const TokenClaims& claims, int64_t now) const;

  const AuthConfig config_;
  core::Family<core::Counter>& failures_;      // labels: reason
  core::Family<core::Counter>& key_requests_;  // labels: key
  core::Family<core::Counter>& key_limited_;   // labels: key, limit
  core::Gauge& key_count_gauge_;

  core::Family<core::Counter>& tokens_minted_;  // labels: key
  TokenSecret token_secret_{};
  std::function<int64_t()> unix_now_;

  mutable std::mutex mutex_;
  std::shared_ptr<const KeySet> keys_;  // guarded by mutex_; swapped whole on reload

  // Single-use tokens spent on this replica, by id, with their expiry: kept until then.
  mutable std::mutex spent_mutex_;
  mutable std::unordered_map<std::string, int64_t> spent_;
  mutable size_t spent_after_sweep_ = 0;
};

}  // namespace voxserve::transport::auth
