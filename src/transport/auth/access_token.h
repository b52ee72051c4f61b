// Short-lived access tokens for clients that must not hold an API key (a browser page): minted
// by POST /v1/tokens with a key, carrying that key's name, an expiry, optionally fewer models and
// single use. Verified without a database, as OpenAI's ephemeral keys and ElevenLabs' single-use
// tokens are used: the token is its claims signed with HMAC-SHA256 under a key derived from the
// server's token secret and the API key itself (its SHA-256 or its certificate subject), so a
// token dies with its key (removed or rotated) and any replica sharing the secret and the keys
// file verifies it.
//
//   vxt_<base64url(JSON claims)>.<base64url(HMAC-SHA256)>
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "transport/auth/api_keys_file.h"

namespace voxserve::transport::auth {

inline constexpr std::string_view kAccessTokenPrefix = "vxt_";

using TokenSecret = std::array<uint8_t, 32>;
using SigningKey = std::array<uint8_t, 32>;

struct TokenClaims {
  std::string key_name;    // the API key it stands for; empty: minted with auth off
  int64_t expires_at = 0;  // Unix seconds
  std::string id;          // 128 random bits in hex: what single use remembers
  bool single_use = false;
  std::vector<std::string> models;  // empty: the key's models
};

// True for a credential shaped like a token (its prefix), as opposed to an API key.
bool LooksLikeAccessToken(std::string_view credential);

// The key a token of `key` is signed with: it changes when the key's secret (or certificate
// subject) does, which is what ends the key's tokens.
SigningKey SigningKeyFor(const TokenSecret& secret, const ApiKey& key);

std::string EncodeAccessToken(const TokenClaims& claims, const SigningKey& signing_key);

// The claims as written, unverified: which key to verify against. Malformed tokens are an
// Unauthenticated error with code invalid_token.
absl::StatusOr<TokenClaims> ReadAccessTokenClaims(std::string_view token);

// The signature checked in constant time against `signing_key`.
bool AccessTokenSignatureMatches(std::string_view token, const SigningKey& signing_key);

// 32 random bytes, or those of a file (at least 32 bytes; a file shorter is an error naming it).
absl::StatusOr<TokenSecret> LoadTokenSecret(const std::string& path);
TokenSecret RandomTokenSecret();
std::string RandomTokenId();

}  // namespace voxserve::transport::auth
