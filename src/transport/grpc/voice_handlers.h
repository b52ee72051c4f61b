// TextToSpeech.RegisterVoice, ListClonedVoices, GetVoice, DeleteVoice: the gRPC face of the
// service's VoiceRegistry (REST: /v1/audio/voices). Errors through the one status mapping.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/server_callback.h>

#include "transport/grpc/handler_env.h"

namespace voxserve::transport::grpc {

// On the gRPC thread that received the call; request and reply are the call's bytes
// (transport/grpc/unary_call.h). RegisterVoice answers from the registry's cloning worker
// (Answer is safe from any thread); the others answer at once from the store's in-memory index.
::grpc::ServerUnaryReactor* StartRegisterVoice(HandlerEnv& env,
                                               ::grpc::CallbackServerContext* context,
                                               const ::grpc::ByteBuffer* request,
                                               ::grpc::ByteBuffer* reply);
::grpc::ServerUnaryReactor* AnswerListClonedVoices(HandlerEnv& env,
                                                   ::grpc::CallbackServerContext* context,
                                                   const ::grpc::ByteBuffer* request,
                                                   ::grpc::ByteBuffer* reply);
::grpc::ServerUnaryReactor* AnswerGetVoice(HandlerEnv& env, ::grpc::CallbackServerContext* context,
                                           const ::grpc::ByteBuffer* request,
                                           ::grpc::ByteBuffer* reply);
::grpc::ServerUnaryReactor* AnswerDeleteVoice(HandlerEnv& env,
                                              ::grpc::CallbackServerContext* context,
                                              const ::grpc::ByteBuffer* request,
                                              ::grpc::ByteBuffer* reply);

}  // namespace voxserve::transport::grpc
