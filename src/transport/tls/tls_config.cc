#include "transport/tls/tls_config.h"

#include "core/error.h"
#include "core/read_file.h"

namespace voxserve::transport::tls {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, const std::string& key) {
  auto text = core::ReadFile(path);
  if (!text) return core::InvalidArgument(key + ": cannot read " + path);
  return *std::move(text);
}

}  // namespace

absl::Status TlsConfig::Validate() const {
  if (cert_file.empty() != key_file.empty()) {
    return core::InvalidArgument("tls.cert_file and tls.key_file go together: set both or neither");
  }
  if (client_auth != ClientAuth::kNone && client_ca_file.empty()) {
    return core::InvalidArgument("tls.client_auth " + std::string(ClientAuthName(client_auth)) +
                                 " needs tls.client_ca_file");
  }
  if (!client_ca_file.empty() && !enabled()) {
    return core::InvalidArgument("tls.client_ca_file needs tls.cert_file and tls.key_file");
  }
  return absl::OkStatus();
}

absl::StatusOr<ClientAuth> ParseClientAuth(std::string_view text) {
  if (text == "none") return ClientAuth::kNone;
  if (text == "optional") return ClientAuth::kOptional;
  if (text == "require") return ClientAuth::kRequire;
  return core::InvalidArgument("'" + std::string(text) + "' is not one of none, optional, require");
}

std::string_view ClientAuthName(ClientAuth mode) {
  switch (mode) {
    case ClientAuth::kNone:
      return "none";
    case ClientAuth::kOptional:
      return "optional";
    case ClientAuth::kRequire:
      return "require";
  }
  return "none";
}

absl::StatusOr<PemMaterial> ReadPemFiles(const TlsConfig& config) {
  PemMaterial pem;
  auto cert = ReadFile(config.cert_file, "tls.cert_file");
  if (!cert.ok()) return cert.status();
  auto key = ReadFile(config.key_file, "tls.key_file");
  if (!key.ok()) return key.status();
  pem.cert_chain = std::move(*cert);
  pem.private_key = std::move(*key);
  if (!config.client_ca_file.empty()) {
    auto ca = ReadFile(config.client_ca_file, "tls.client_ca_file");
    if (!ca.ok()) return ca.status();
    pem.client_ca = std::move(*ca);
  }
  return pem;
}

}  // namespace voxserve::transport::tls
