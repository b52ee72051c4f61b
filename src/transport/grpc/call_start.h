// What every voxserve.v1 call does first, whatever its shape: pick the request id (the client's
// x-request-id if usable), echo it in initial metadata, and pass the call gate (auth hook).
#pragma once

#include <grpcpp/server_context.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "service/synthesis_request.h"
#include "transport/grpc/call_gate.h"

namespace voxserve::transport::grpc {

struct CallStart {
  std::string request_id;
  CallGrant grant;  // from the gate; held until the call ends
  // From the client's `cache-control` metadata (HTTP's Cache-Control: no-cache, no-store).
  service::CachePolicy cache_policy = service::CachePolicy::kUse;

  // The request id, the cache policy and what the gate asked for, on a request this call makes.
  void Prepare(service::SynthesisRequest& request) const;
};

// `x-cache` trailing metadata (hit, miss, bypass; none while the cache is off), as HTTP's
// X-Cache. Before the call's Finish.
void AddCacheTrailer(::grpc::CallbackServerContext& context, service::CacheResult result);

// On the gRPC thread that runs the method handler, before the reactor is returned (initial
// metadata is still unsent then).
absl::StatusOr<CallStart> StartCall(::grpc::CallbackServerContext& context, std::string_view method,
                                    const CallGate& gate);

}  // namespace voxserve::transport::grpc
