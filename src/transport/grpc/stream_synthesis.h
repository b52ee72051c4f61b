// TextToSpeech.SynthesizeStream: the whole text → audio chunks as each sentence is synthesized,
// then a `done` message with usage and timings.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "transport/grpc/handler_env.h"
#include "voxserve/v1/tts.pb.h"

namespace voxserve::transport::grpc {

// Runs on the gRPC thread that received the call; returns at once (the reactor deletes itself
// when the call is done).
::grpc::ServerWriteReactor<v1::SynthesizeStreamResponse>* StartStreamSynthesis(
    HandlerEnv& env, ::grpc::CallbackServerContext* context, const v1::SynthesizeRequest* request);

}  // namespace voxserve::transport::grpc
