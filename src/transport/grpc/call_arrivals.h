// When the gRPC server last saw a call arrive, for the drain: it shuts gRPC down only once no
// call has arrived for a while, because gRPC core cancels any call that arrives after its
// shutdown has begun (listening_sockets.h says why that matters).
#pragma once

#include <grpcpp/support/server_interceptor.h>

#include <atomic>
#include <chrono>
#include <memory>

namespace voxserve::transport::grpc {

// Shared by the server (WaitQuiet, on the draining thread) and the interceptor factory (called
// on gRPC's threads, once per call, before its handler); safe cross thread.
class CallArrivals {
 public:
  CallArrivals();

  // Records an arrival now.
  void Arrived();

  // Returns once no call has arrived for `quiet`, or at `deadline`, whichever is first.
  void WaitQuiet(std::chrono::milliseconds quiet,
                 std::chrono::steady_clock::time_point deadline) const;

  // A factory for ServerBuilder::experimental().SetInterceptorCreators: it records each call's
  // arrival (health checks aside) and adds no interceptor to the call. `arrivals` must
  // outlive the server.
  static std::unique_ptr<::grpc::experimental::ServerInterceptorFactoryInterface> Recorder(
      CallArrivals& arrivals);

 private:
  std::atomic<std::chrono::steady_clock::rep> last_;  // steady_clock ticks
};

}  // namespace voxserve::transport::grpc
