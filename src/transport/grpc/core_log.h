// gRPC core's own log lines (gpr_log), which it would write to stderr in its own format, go into
// voxserve's log instead, at their severity, so `log.format: json` holds for every line.
#pragma once

namespace voxserve::transport::grpc {

// Process-wide; idempotent. Call before the first gRPC server or channel is built.
void RouteGrpcCoreLog();

// The drain's RefuseNewConnections shuts the listening socket down on purpose, and gRPC's accept
// loop then logs "Failed accept4: Invalid argument" once as an error (grpc 1.51
// tcp_server_posix.cc, on_read: it keeps quiet only once its own Shutdown has begun). After this
// call that line is logged at debug: a clean shutdown logs no error. Safe cross thread.
void ExpectListenerStopped();

}  // namespace voxserve::transport::grpc
