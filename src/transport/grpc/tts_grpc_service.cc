#include "transport/grpc/tts_grpc_service.h"

#include "transport/grpc/catalog_handlers.h"
#include "transport/grpc/incremental_synthesis.h"
#include "transport/grpc/stream_synthesis.h"
#include "transport/grpc/unary_synthesis.h"
#include "transport/grpc/voice_handlers.h"

namespace voxserve::transport::grpc {

::grpc::ServerUnaryReactor* TtsGrpcService::Synthesize(::grpc::CallbackServerContext* context,
                                                       const ::grpc::ByteBuffer* request,
                                                       ::grpc::ByteBuffer* reply) {
  return StartUnarySynthesis(env_, context, request, reply);
}

::grpc::ServerWriteReactor<::grpc::ByteBuffer>* TtsGrpcService::SynthesizeStream(
    ::grpc::CallbackServerContext* context, const ::grpc::ByteBuffer* request) {
  return StartStreamSynthesis(env_, context, request);
}

::grpc::ServerBidiReactor<v1::StreamingSynthesizeRequest, v1::StreamingSynthesizeResponse>*
TtsGrpcService::StreamingSynthesize(::grpc::CallbackServerContext* context) {
  return StartIncrementalSynthesis(env_, context);
}

::grpc::ServerUnaryReactor* TtsGrpcService::ListVoices(::grpc::CallbackServerContext* context,
                                                       const ::grpc::ByteBuffer* request,
                                                       ::grpc::ByteBuffer* reply) {
  return AnswerListVoices(env_, context, request, reply);
}

::grpc::ServerUnaryReactor* TtsGrpcService::ListModels(::grpc::CallbackServerContext* context,
                                                       const ::grpc::ByteBuffer* request,
                                                       ::grpc::ByteBuffer* reply) {
  return AnswerListModels(env_, context, request, reply);
}

::grpc::ServerUnaryReactor* TtsGrpcService::RegisterVoice(::grpc::CallbackServerContext* context,
                                                          const ::grpc::ByteBuffer* request,
                                                          ::grpc::ByteBuffer* reply) {
  return StartRegisterVoice(env_, context, request, reply);
}

::grpc::ServerUnaryReactor* TtsGrpcService::ListClonedVoices(::grpc::CallbackServerContext* context,
                                                             const ::grpc::ByteBuffer* request,
                                                             ::grpc::ByteBuffer* reply) {
  return AnswerListClonedVoices(env_, context, request, reply);
}

::grpc::ServerUnaryReactor* TtsGrpcService::GetVoice(::grpc::CallbackServerContext* context,
                                                     const ::grpc::ByteBuffer* request,
                                                     ::grpc::ByteBuffer* reply) {
  return AnswerGetVoice(env_, context, request, reply);
}

::grpc::ServerUnaryReactor* TtsGrpcService::DeleteVoice(::grpc::CallbackServerContext* context,
                                                        const ::grpc::ByteBuffer* request,
                                                        ::grpc::ByteBuffer* reply) {
  return AnswerDeleteVoice(env_, context, request, reply);
}

}  // namespace voxserve::transport::grpc
