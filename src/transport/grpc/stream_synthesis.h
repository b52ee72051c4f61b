// TextToSpeech.SynthesizeStream: the whole text → audio chunks as each sentence is synthesized,
// then a `done` message with usage and timings.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "transport/grpc/handler_env.h"

namespace voxserve::transport::grpc {

// Runs on the gRPC thread that received the call; returns at once (the reactor deletes itself
// when the call is done). The method is raw: request and messages are bytes (a
// SynthesizeRequest in, SynthesizeStreamResponse messages out; transport/grpc/unary_call.h).
::grpc::ServerWriteReactor<::grpc::ByteBuffer>* StartStreamSynthesis(
    HandlerEnv& env, ::grpc::CallbackServerContext* context, const ::grpc::ByteBuffer* request);

}  // namespace voxserve::transport::grpc
