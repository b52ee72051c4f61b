// TLS settings shared by every listener (YAML: tls.*). The same PEM files serve HTTP/WebSocket
// (Asio's ssl::context, tls_context.h) and gRPC (grpc::SslServerCredentials via ReadPemFiles).
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace voxserve::transport::tls {

enum class ClientAuth {
  kNone,      // no client certificate asked for
  kOptional,  // asked for; when sent it must verify against client_ca_file
  kRequire,   // mutual TLS: no verified certificate, no connection
};

struct TlsConfig {
  std::string cert_file;       // PEM certificate chain, leaf first; empty = plain HTTP
  std::string key_file;        // PEM private key of the leaf
  std::string client_ca_file;  // PEM CA bundle client certificates must chain to
  ClientAuth client_auth = ClientAuth::kNone;

  bool enabled() const { return !cert_file.empty(); }
  // Names the key at fault: cert without key, a client_auth without a CA, ...
  absl::Status Validate() const;
};

absl::StatusOr<ClientAuth> ParseClientAuth(std::string_view text);  // none | optional | require
std::string_view ClientAuthName(ClientAuth mode);

// The files' contents, for transports that take PEM text (gRPC's SslServerCredentials).
struct PemMaterial {
  std::string cert_chain;
  std::string private_key;
  std::string client_ca;  // empty without client_ca_file
};
absl::StatusOr<PemMaterial> ReadPemFiles(const TlsConfig& config);

}  // namespace voxserve::transport::tls
