// TextToSpeech.ListVoices and ListModels: answered at once from the service's catalog (the same
// lists as REST's GET /v1/voices and GET /v1/models).
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "transport/grpc/handler_env.h"

namespace voxserve::transport::grpc {

// On the gRPC thread that received the call; no blocking work (the catalog is in memory). The
// request and reply are the call's bytes (transport/grpc/unary_call.h).
::grpc::ServerUnaryReactor* AnswerListVoices(HandlerEnv& env,
                                             ::grpc::CallbackServerContext* context,
                                             const ::grpc::ByteBuffer* request,
                                             ::grpc::ByteBuffer* reply);
::grpc::ServerUnaryReactor* AnswerListModels(HandlerEnv& env,
                                             ::grpc::CallbackServerContext* context,
                                             const ::grpc::ByteBuffer* request,
                                             ::grpc::ByteBuffer* reply);

}  // namespace voxserve::transport::grpc
