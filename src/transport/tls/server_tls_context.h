// The server side of TLS for Asio listeners (HTTP, WebSocket): TLS 1.2 or newer only, the
// configured certificate and key, and client certificate verification for mTLS. Reload() builds
// a fresh context from the files; a connection keeps the context it started with, so a
// certificate rotation on SIGHUP drops nobody.
#pragma once

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "transport/tls/tls_config.h"

namespace voxserve::transport::tls {

// Current() and Reload() are safe cross thread.
class ServerTlsContext {
 public:
  // Fails with a message naming the file when a certificate, key or CA cannot be used.
  static absl::StatusOr<std::unique_ptr<ServerTlsContext>> Create(const TlsConfig& config);

  std::shared_ptr<boost::asio::ssl::context> Current() const;
  // On failure the current context stays in force.
  absl::Status Reload();

  const TlsConfig& config() const { return config_; }
  // When the current certificate expires, in seconds since the Unix epoch (for a metric).
  double not_after_seconds() const;

 private:
  explicit ServerTlsContext(TlsConfig config) : config_(std::move(config)) {}

  const TlsConfig config_;
  mutable std::mutex mutex_;
  std::shared_ptr<boost::asio::ssl::context> current_;  // guarded by mutex_
  double not_after_seconds_ = 0;                        // guarded by mutex_
};

// The subject of the client certificate the handshake verified, RFC 2253 style
// ("CN=alice,O=Example"); empty when the client sent none.
std::string VerifiedPeerSubject(SSL* ssl);

}  // namespace voxserve::transport::tls
