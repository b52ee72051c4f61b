// TextToSpeech.ListVoices and ListModels: answered at once from the service's catalog (the same
// lists as REST's GET /v1/voices and GET /v1/models).
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "transport/grpc/handler_env.h"
#include "voxserve/v1/tts.pb.h"

namespace voxserve::transport::grpc {

// On the gRPC thread that received the call; no blocking work (the catalog is in memory).
::grpc::ServerUnaryReactor* AnswerListVoices(HandlerEnv& env,
                                             ::grpc::CallbackServerContext* context,
                                             const v1::ListVoicesRequest* request,
                                             v1::ListVoicesResponse* response);
::grpc::ServerUnaryReactor* AnswerListModels(HandlerEnv& env,
                                             ::grpc::CallbackServerContext* context,
                                             const v1::ListModelsRequest* request,
                                             v1::ListModelsResponse* response);

}  // namespace voxserve::transport::grpc
