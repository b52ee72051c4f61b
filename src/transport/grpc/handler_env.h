// What every voxserve.v1 handler works with. Owned by TtsGrpcService; outlives every call (the
// server waits for all calls to end before it goes).
#pragma once

#include "service/tts_service.h"
#include "transport/grpc/call_gate.h"
#include "transport/grpc/grpc_metrics.h"

namespace voxserve::transport::grpc {

struct HandlerEnv {
  service::TtsService& service;
  GrpcMetrics& metrics;
  CallGate gate;
};

}  // namespace voxserve::transport::grpc
