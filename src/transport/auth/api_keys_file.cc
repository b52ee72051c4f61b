#include "transport/auth/api_keys_file.h"

#include <openssl/evp.h>

#include <set>

#include "core/error.h"
#include "core/options.h"
#include "core/read_file.h"
#include "core/yaml_schema.h"
#include "yaml-cpp/yaml.h"

namespace voxserve::transport::auth {
namespace {

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

std::optional<KeyDigest> ParseHexDigest(const std::string& hex) {
  if (hex.size() != 64) return std::nullopt;
  KeyDigest digest{};
  for (size_t i = 0; i < digest.size(); ++i) {
    unsigned value = 0;
    for (char c : hex.substr(2 * i, 2)) {
      int nibble = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                   : (c >= 'a' && c <= 'f')                    ? c - 'a' + 10
                   : (c >= 'A' && c <= 'F')                    ? c - 'A' + 10
                                                               : -1;
      if (nibble < 0) return std::nullopt;
      value = value * 16 + static_cast<unsigned>(nibble);
    }
    digest[i] = static_cast<uint8_t>(value);
  }
  return digest;
}

absl::Status Error(const std::string& where, const std::string& message) {
  return core::InvalidArgument(where + ": " + message);
}

absl::StatusOr<double> ReadNumber(const YAML::Node& node, const std::string& where, double min,
                                  double max) {
  double value = 0;
  absl::Status status = node.IsScalar() ? core::ParseDouble(node.Scalar(), min, max, &value)
                                        : core::InvalidArgument("expected a number");
  if (!status.ok()) return Error(where, std::string(status.message()));
  return value;
}

absl::StatusOr<ApiKey> ReadKey(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap()) return Error(where, "expected a mapping");
  ApiKey key;
  if (node["name"] && node["name"].IsScalar()) key.name = node["name"].Scalar();
  if (!ValidName(key.name)) {
    return Error(where + ".name", "required, 1-64 characters of A-Z a-z 0-9 _ . -");
  }
  const YAML::Node& plain = node["key"];
  const YAML::Node& sha = node["sha256"];
  if (plain && sha) return Error(where, "give key or sha256, not both");
  if (plain) {
    if (!plain.IsScalar() || plain.Scalar().empty()) return Error(where + ".key", "empty");
    key.digest = Sha256(plain.Scalar());
  } else if (sha) {
    key.digest = sha.IsScalar() ? ParseHexDigest(sha.Scalar()) : std::nullopt;
    if (!key.digest) return Error(where + ".sha256", "expected 64 hex digits");
  }
  if (const YAML::Node& subject = node["client_subject"]) {
    if (!subject.IsScalar() || subject.Scalar().empty()) {
      return Error(where + ".client_subject", "expected a subject such as \"CN=alice\"");
    }
    key.client_subject = subject.Scalar();
    auto parsed = DistinguishedName::Parse(key.client_subject);
    if (!parsed.ok())
      return Error(where + ".client_subject", std::string(parsed.status().message()));
    key.subject_name = *std::move(parsed);
  }
  if (!key.digest && key.client_subject.empty()) {
    return Error(where, "needs key, sha256 or client_subject");
  }
  if (const YAML::Node& rate = node["rate_limit"]) {
    if (!rate.IsMap() || !rate["requests_per_second"]) {
      return Error(where + ".rate_limit", "expected {requests_per_second: N, burst: M}");
    }
    auto per_second = ReadNumber(rate["requests_per_second"],
                                 where + ".rate_limit.requests_per_second", 0.001, 1e6);
    if (!per_second.ok()) return per_second.status();
    RateLimit limit{*per_second, std::max(1.0, *per_second)};
    if (rate["burst"]) {
      auto burst = ReadNumber(rate["burst"], where + ".rate_limit.burst", 1, 1e6);
      if (!burst.ok()) return burst.status();
      limit.burst = *burst;
    }
    key.rate_limit = limit;
  }
  if (const YAML::Node& concurrent = node["max_concurrent"]) {
    auto value = ReadNumber(concurrent, where + ".max_concurrent", 1, 1e6);
    if (!value.ok()) return value.status();
    key.max_concurrent = static_cast<int>(*value);
  }
  if (const YAML::Node& models = node["models"]) {
    if (!models.IsSequence()) return Error(where + ".models", "expected a list of model ids");
    for (const auto& model : models) {
      if (!model.IsScalar()) return Error(where + ".models", "expected a list of model ids");
      key.models.push_back(model.Scalar());
    }
  }
  return key;
}

// Every key the file may hold: a misspelled `max_concurent` must not silently drop a limit.
const core::YamlSchema& KeysFileSchema() {
  using core::YamlSchema;
  static const YamlSchema schema = YamlSchema::Fields().Field(
      "keys", YamlSchema::ListOf(
                  YamlSchema::Fields()
                      .Field("name", YamlSchema::Scalar())
                      .Field("key", YamlSchema::Scalar())
                      .Field("sha256", YamlSchema::Scalar())
                      .Field("client_subject", YamlSchema::Scalar())
                      .Field("rate_limit", YamlSchema::Fields()
                                               .Field("requests_per_second", YamlSchema::Scalar())
                                               .Field("burst", YamlSchema::Scalar()))
                      .Field("max_concurrent", YamlSchema::Scalar())
                      .Field("models", YamlSchema::ListOf(YamlSchema::Scalar()))));
  return schema;
}

absl::StatusOr<std::vector<ApiKey>> ReadKeys(const YAML::Node& root, const std::string& origin) {
  if (!root.IsMap() || !root["keys"] || !root["keys"].IsSequence()) {
    return Error(origin, "expected a mapping with a list under 'keys'");
  }
  if (absl::Status status = KeysFileSchema().Check(root); !status.ok()) {
    return Error(origin, std::string(status.message()));
  }
  std::vector<ApiKey> keys;
  std::set<std::string> names;
  std::set<KeyDigest> digests;
  const YAML::Node& list = root["keys"];
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = origin + ": keys[" + std::to_string(i) + "]";
    auto key = ReadKey(list[i], where);
    if (!key.ok()) return key.status();
    if (!names.insert(key->name).second) return Error(where + ".name", "'" + key->name + "' twice");
    if (key->digest && !digests.insert(*key->digest).second) {
      return Error(where, "the same secret as an earlier key");
    }
    keys.push_back(std::move(*key));
  }
  return keys;
}

}  // namespace

KeyDigest Sha256(std::string_view text) {
  KeyDigest digest{};
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr);
  return digest;
}

// The one place yaml-cpp is called for this file; nothing it throws gets out.
absl::StatusOr<std::vector<ApiKey>> ParseApiKeys(const std::string& yaml,
                                                 const std::string& origin) {
  try {
    return ReadKeys(YAML::Load(yaml), origin);
  } catch (const YAML::Exception& error) {
    std::string where =
        error.mark.is_null() ? "" : " at line " + std::to_string(error.mark.line + 1);
    return Error(origin, "not valid YAML" + where + ": " + error.msg);
  } catch (const std::exception& error) {
    return Error(origin, std::string("not valid YAML: ") + error.what());
  }
}

absl::StatusOr<std::vector<ApiKey>> LoadApiKeysFile(const std::string& path) {
  auto text = core::ReadFile(path);
  if (!text) return core::InvalidArgument("cannot read API keys file " + path);
  return ParseApiKeys(*text, path);
}

}  // namespace voxserve::transport::auth
