// The gRPC listener's sockets, found so the drain can refuse new connections without
// ::grpc::Server::Shutdown. Shutdown is the C++ API's only way to close the listener, and it also
// cancels every call that arrives after it (grpc 1.51 src/core/lib/surface/server.cc,
// Server::CallData::StartNewRpc -> KillZombie: a trailers-only CANCELLED), including calls a
// peer sent before it could read the GOAWAY. Refusing connections first and shutting down once
// no peer can send more is what keeps a drain from cancelling a call: docs/grpc-drain.md.
#pragma once

#include <vector>

namespace voxserve::transport::grpc {

// File descriptors of this process's listening TCP sockets bound to `port` (several when a
// host name resolved to more than one address). Reads /proc/self/fd; empty where there is none.
// The descriptors stay owned by whoever opened them (here: gRPC, which closes them in Shutdown).
std::vector<int> ListeningSocketsOnPort(int port);

// shutdown(2) on each listening socket: from now on the kernel refuses connections to it (RST),
// and connections it had accepted but nobody had taken yet are reset, so a proxy that wrote a
// request on one knows nothing was processed and retries elsewhere (nginx: `error`). gRPC's
// accept loop sees EINVAL, logs "Failed accept4" once and stops watching the socket; its
// connections already open are untouched (core_log.h logs that line at debug: it is expected).
// The descriptors are not closed.
void RefuseNewConnections(const std::vector<int>& sockets);

}  // namespace voxserve::transport::grpc
