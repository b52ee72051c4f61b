// TextToSpeech.Synthesize: the whole text → one complete audio file in one response.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "transport/grpc/handler_env.h"
#include "voxserve/v1/tts.pb.h"

namespace voxserve::transport::grpc {

// Runs on the gRPC thread that received the call; returns at once (the reactor deletes itself
// when the call is done).
::grpc::ServerUnaryReactor* StartUnarySynthesis(HandlerEnv& env,
                                                ::grpc::CallbackServerContext* context,
                                                const v1::SynthesizeRequest* request,
                                                v1::SynthesizeResponse* response);

}  // namespace voxserve::transport::grpc
