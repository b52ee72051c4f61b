#include "transport/grpc/tts_grpc_service.h"

#include "transport/grpc/catalog_handlers.h"
#include "transport/grpc/incremental_synthesis.h"
#include "transport/grpc/stream_synthesis.h"
#include "transport/grpc/unary_synthesis.h"

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

}  // namespace voxserve::transport::grpc
