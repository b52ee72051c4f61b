// What every voxserve.v1 call does first, whatever its shape: pick the request id (the client's
// x-request-id if usable), echo it in initial metadata, and pass the call gate (auth hook).
#pragma once

#include <grpcpp/server_context.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "transport/grpc/call_gate.h"

namespace voxserve::transport::grpc {

struct CallStart {
  std::string request_id;
  CallGrant grant;  // from the gate; held until the call ends

  // The request id and what the gate asked for, on a request this call makes.
  void Prepare(service::SynthesisRequest& request) const;
};

// On the gRPC thread that runs the method handler, before the reactor is returned (initial
// metadata is still unsent then).
absl::StatusOr<CallStart> StartCall(::grpc::CallbackServerContext& context, std::string_view method,
                                    const CallGate& gate);

}  // namespace voxserve::transport::grpc
