// TextToSpeech.RegisterVoice, ListClonedVoices, GetVoice, DeleteVoice: the gRPC face of the
// service's VoiceRegistry (REST: /v1/audio/voices). Errors through the one status mapping.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "transport/grpc/handler_env.h"
#include "voxserve/v1/tts.pb.h"

namespace voxserve::transport::grpc {

// On the gRPC thread that received the call. RegisterVoice finishes from the registry's
// cloning worker (the default reactor's Finish is safe from any thread); the others answer at
// once from the store's in-memory index.
::grpc::ServerUnaryReactor* StartRegisterVoice(HandlerEnv& env,
                                               ::grpc::CallbackServerContext* context,
                                               const v1::RegisterVoiceRequest* request,
                                               v1::ClonedVoice* response);
::grpc::ServerUnaryReactor* AnswerListClonedVoices(HandlerEnv& env,
                                                   ::grpc::CallbackServerContext* context,
                                                   const v1::ListClonedVoicesRequest* request,
                                                   v1::ListClonedVoicesResponse* response);
::grpc::ServerUnaryReactor* AnswerGetVoice(HandlerEnv& env, ::grpc::CallbackServerContext* context,
                                           const v1::GetVoiceRequest* request,
                                           v1::ClonedVoice* response);
::grpc::ServerUnaryReactor* AnswerDeleteVoice(HandlerEnv& env,
                                              ::grpc::CallbackServerContext* context,
                                              const v1::DeleteVoiceRequest* request,
                                              v1::DeleteVoiceResponse* response);

}  // namespace voxserve::transport::grpc
