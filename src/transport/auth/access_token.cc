#include "transport/auth/access_token.h"

#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "absl/strings/escaping.h"
#include "core/error.h"
#include "core/read_file.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::auth {
namespace {

using json = nlohmann::json;

// Tokens travel in URLs and headers: no claims this large are ever minted.
constexpr size_t kMaxTokenBytes = 4096;
constexpr size_t kMinSecretFileBytes = 32;

std::array<uint8_t, 32> Hmac(std::string_view key, std::string_view data) {
  std::array<uint8_t, 32> mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac.data(), &length);
  return mac;
}

// Debian's Abseil has its own string_view.
absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

std::string_view AsText(const std::array<uint8_t, 32>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

absl::Status Invalid(std::string_view why) {
  return core::Unauthenticated("invalid access token: " + std::string(why), "invalid_token");
}

// The token's two parts, split at its only '.'.
bool Split(std::string_view token, std::string_view* claims, std::string_view* signature) {
  if (!LooksLikeAccessToken(token) || token.size() > kMaxTokenBytes) return false;
  token.remove_prefix(kAccessTokenPrefix.size());
  size_t dot = token.find('.');
  if (dot == std::string_view::npos || token.find('.', dot + 1) != std::string_view::npos) {
    return false;
  }
  *claims = token.substr(0, dot);
  *signature = token.substr(dot + 1);
  return true;
}

}  // namespace

bool LooksLikeAccessToken(std::string_view credential) {
  return credential.starts_with(kAccessTokenPrefix);
}

SigningKey SigningKeyFor(const TokenSecret& secret, const ApiKey& key) {
  // What identifies the key's secret: its digest, or for a certificate-only entry its subject.
  std::string identity = "voxserve access token v1";
  identity.push_back('\0');
  identity += key.name;
  identity.push_back('\0');
  if (key.digest) {
    identity.append(reinterpret_cast<const char*>(key.digest->data()), key.digest->size());
  } else {
    identity += key.client_subject;
  }
  return Hmac(AsText(secret), identity);
}

std::string EncodeAccessToken(const TokenClaims& claims, const SigningKey& signing_key) {
  json body = {{"k", claims.key_name}, {"exp", claims.expires_at}, {"jti", claims.id}};
  if (claims.single_use) body["su"] = true;
  if (!claims.models.empty()) body["m"] = claims.models;
  std::string encoded = absl::WebSafeBase64Escape(body.dump());
  std::string signature =
      absl::WebSafeBase64Escape(std::string(AsText(Hmac(AsText(signing_key), encoded))));
  return std::string(kAccessTokenPrefix) + encoded + "." + signature;
}

absl::StatusOr<TokenClaims> ReadAccessTokenClaims(std::string_view token) {
  std::string_view encoded;
  std::string_view signature;
  if (!Split(token, &encoded, &signature)) return Invalid("not a voxserve token");
  std::string text;
  if (!absl::WebSafeBase64Unescape(Absl(encoded), &text))
    return Invalid("its claims are not base64url");
  json body = json::parse(text, nullptr, false);
  TokenClaims claims;
  try {
    if (!body.is_object()) return Invalid("its claims are not a JSON object");
    claims.key_name = body.at("k").get<std::string>();
    claims.expires_at = body.at("exp").get<int64_t>();
    claims.id = body.at("jti").get<std::string>();
    claims.single_use = body.value("su", false);
    if (body.contains("m")) claims.models = body.at("m").get<std::vector<std::string>>();
  } catch (const json::exception&) {
    return Invalid("its claims lack a field or have one of the wrong type");
  }
  return claims;
}

bool AccessTokenSignatureMatches(std::string_view token, const SigningKey& signing_key) {
  std::string_view encoded;
  std::string_view signature;
  std::string presented;
  if (!Split(token, &encoded, &signature) ||
      !absl::WebSafeBase64Unescape(Absl(signature), &presented) || presented.size() != 32) {
    return false;
  }
  std::array<uint8_t, 32> expected = Hmac(AsText(signing_key), encoded);
  return CRYPTO_memcmp(expected.data(), presented.data(), expected.size()) == 0;
}

absl::StatusOr<TokenSecret> LoadTokenSecret(const std::string& path) {
  auto read = core::ReadFile(path);
  if (!read) return core::InvalidArgument("cannot read auth.token_secret_file " + path);
  std::string secret = *std::move(read);
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.size() < kMinSecretFileBytes) {
    return core::InvalidArgument("auth.token_secret_file " + path + " holds " +
                                 std::to_string(secret.size()) + " bytes; it needs at least " +
                                 std::to_string(kMinSecretFileBytes) +
                                 " (e.g. openssl rand -hex 32)");
  }
  // Any length and alphabet in, 32 bytes out.
  return Hmac("voxserve token secret", secret);
}

TokenSecret RandomTokenSecret() {
  TokenSecret secret{};
  RAND_bytes(secret.data(), static_cast<int>(secret.size()));
  return secret;
}

std::string RandomTokenId() {
  std::array<uint8_t, 16> bytes{};
  RAND_bytes(bytes.data(), static_cast<int>(bytes.size()));
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace voxserve::transport::auth
