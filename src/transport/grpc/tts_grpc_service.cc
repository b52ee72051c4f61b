#include "transport/grpc/tts_grpc_service.h"

#include "transport/grpc/catalog_handlers.h"
#include "transport/grpc/incremental_synthesis.h"
#include "transport/grpc/stream_synthesis.h"
#include "transport/grpc/unary_synthesis.h"
#include "transport/grpc/voice_handlers.h"

namespace voxserve::transport::grpc {

::grpc::ServerUnaryReactor* TtsGrpcService::Synthesize(::grpc::CallbackServerContext* context,
                                                       const v1::SynthesizeRequest* request,
                                                       v1::SynthesizeResponse* response) {
  return StartUnarySynthesis(env_, context, request, response);
}

::grpc::ServerWriteReactor<v1::SynthesizeStreamResponse>* TtsGrpcService::SynthesizeStream(
    ::grpc::CallbackServerContext* context, const v1::SynthesizeRequest* request) {
  return StartStreamSynthesis(env_, context, request);
}

::grpc::ServerBidiReactor<v1::StreamingSynthesizeRequest, v1::StreamingSynthesizeResponse>*
TtsGrpcService::StreamingSynthesize(::grpc::CallbackServerContext* context) {
  return StartIncrementalSynthesis(env_, context);
}

::grpc::ServerUnaryReactor* TtsGrpcService::ListVoices(::grpc::CallbackServerContext* context,
                                                       const v1::ListVoicesRequest* request,
                                                       v1::ListVoicesResponse* response) {
  return AnswerListVoices(env_, context, request, response);
}

::grpc::ServerUnaryReactor* TtsGrpcService::ListModels(::grpc::CallbackServerContext* context,
                                                       const v1::ListModelsRequest* request,
                                                       v1::ListModelsResponse* response) {
  return AnswerListModels(env_, context, request, response);
}

::grpc::ServerUnaryReactor* TtsGrpcService::RegisterVoice(::grpc::CallbackServerContext* context,
                                                          const v1::RegisterVoiceRequest* request,
                                                          v1::ClonedVoice* response) {
  return StartRegisterVoice(env_, context, request, response);
}

::grpc::ServerUnaryReactor* TtsGrpcService::ListClonedVoices(
    ::grpc::CallbackServerContext* context, const v1::ListClonedVoicesRequest* request,
    v1::ListClonedVoicesResponse* response) {
  return AnswerListClonedVoices(env_, context, request, response);
}

::grpc::ServerUnaryReactor* TtsGrpcService::GetVoice(::grpc::CallbackServerContext* context,
                                                     const v1::GetVoiceRequest* request,
                                                     v1::ClonedVoice* response) {
  return AnswerGetVoice(env_, context, request, response);
}

::grpc::ServerUnaryReactor* TtsGrpcService::DeleteVoice(::grpc::CallbackServerContext* context,
                                                        const v1::DeleteVoiceRequest* request,
                                                        v1::DeleteVoiceResponse* response) {
  return AnswerDeleteVoice(env_, context, request, response);
}

}  // namespace voxserve::transport::grpc
