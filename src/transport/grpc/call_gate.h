// Where authentication and per-caller limits plug into the gRPC server (transport/auth supplies
// them; this module does not know it). Transport-neutral in shape: metadata is looked up as HTTP
// headers are (gRPC metadata keys are lowercase), so one check serves both protocols.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "service/synthesis_request.h"

namespace voxserve::transport::grpc {

struct CallInfo {
  std::string_view method;  // e.g. "Synthesize"
  // The first value of a metadata key (lowercase), e.g. "authorization", "x-api-key"; empty if
  // absent. Valid only during the gate call.
  std::function<std::string_view(std::string_view lowercase_key)> metadata;
  std::string_view client_subject;  // subject of the client certificate TLS verified, or empty
  std::string_view peer;            // e.g. "ipv4:127.0.0.1:51234"
};

// What a call that passed the gate carries with it.
struct CallGrant {
  // Kept until the call ends, e.g. a per-key concurrency slot. May be null.
  std::shared_ptr<void> hold;
  // Applied to every SynthesisRequest the call makes, e.g. to set the key's allowed models.
  std::function<void(service::SynthesisRequest&)> prepare_request;
};

// Called on a gRPC thread at the start of every voxserve.v1 call, before any work; must not
// block. An error ends the call with its mapped code (UNAUTHENTICATED, PERMISSION_DENIED,
// RESOURCE_EXHAUSTED with retry-after-ms, ...). Unset: every call is let through.
using CallGate = std::function<absl::StatusOr<CallGrant>(const CallInfo& call)>;

}  // namespace voxserve::transport::grpc
