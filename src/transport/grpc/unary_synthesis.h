// TextToSpeech.Synthesize: the whole text → one complete audio file in one response.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "transport/grpc/handler_env.h"

namespace voxserve::transport::grpc {

// Runs on the gRPC thread that received the call; returns at once (the reactor deletes itself
// when the call is done). Request and reply are the call's bytes (transport/grpc/unary_call.h).
::grpc::ServerUnaryReactor* StartUnarySynthesis(HandlerEnv& env,
                                                ::grpc::CallbackServerContext* context,
                                                const ::grpc::ByteBuffer* request,
                                                ::grpc::ByteBuffer* reply);

}  // namespace voxserve::transport::grpc
