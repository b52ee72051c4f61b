// Puts the server's API keys and TLS settings in front of the gRPC listener: the same keys,
// limits and certificates as HTTP, checked per call.
#pragma once

#include "absl/status/statusor.h"
#include "server/server_security.h"
#include "transport/grpc/grpc_server.h"
#include "transport/tls/tls_config.h"

namespace voxserve::server {

// Credentials from the TLS files (plaintext without them; client certificates requested or
// required as tls.client_auth says) and a gate that authenticates every call, admits the ones
// that synthesize against the key's limits and passes the key's model list on. The security
// object must outlive the gRPC server. The certificate is read once: a SIGHUP reload reaches
// HTTP/WebSocket connections, while gRPC keeps the one it started with until restarted.
absl::StatusOr<transport::grpc::GrpcServerOptions> GrpcSecurityOptions(
    const transport::tls::TlsConfig& tls, const ServerSecurity& security);

}  // namespace voxserve::server
