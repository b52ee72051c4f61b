// TextToSpeech.StreamingSynthesize: text in pieces (a config message, then text, flush, end) →
// audio as soon as each sentence is complete. A thin adapter over service::SpeechSession, which
// cuts the sentences and synthesizes them one after another (sentence N's audio always precedes
// sentence N+1's); this file only turns messages into session calls and events into messages.
#pragma once

#include <grpcpp/server_context.h>
#include <grpcpp/support/server_callback.h>

#include "transport/grpc/handler_env.h"
#include "voxserve/v1/tts.pb.h"

namespace voxserve::transport::grpc {

// Runs on the gRPC thread that received the call; returns at once (the reactor deletes itself
// when the call is done).
::grpc::ServerBidiReactor<v1::StreamingSynthesizeRequest, v1::StreamingSynthesizeResponse>*
StartIncrementalSynthesis(HandlerEnv& env, ::grpc::CallbackServerContext* context);

}  // namespace voxserve::transport::grpc
