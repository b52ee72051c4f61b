// voxserve.v1.TextToSpeech on gRPC's callback API: each method hands its call to the handler
// for its shape (one file each). The methods taking one request are raw (bytes in, bytes out) so
// that their handlers answer a request gRPC cannot parse (transport/grpc/unary_call.h). Safe cross
// thread; owned by GrpcServer, outlives every call.
#pragma once

#include "transport/grpc/handler_env.h"
#include "voxserve/v1/tts.grpc.pb.h"

namespace voxserve::transport::grpc {

using rpc = v1::TextToSpeech;
using TtsServiceBase =
    rpc::WithRawCallbackMethod_SynthesizeStream<rpc::WithCallbackMethod_StreamingSynthesize<
        rpc::WithRawCallbackMethod_Synthesize<rpc::WithRawCallbackMethod_ListVoices<
            rpc::WithRawCallbackMethod_ListModels<rpc::WithRawCallbackMethod_RegisterVoice<
                rpc::WithRawCallbackMethod_ListClonedVoices<rpc::WithRawCallbackMethod_GetVoice<
                    rpc::WithRawCallbackMethod_DeleteVoice<rpc::Service>>>>>>>>>;

class TtsGrpcService final : public TtsServiceBase {
 public:
  explicit TtsGrpcService(HandlerEnv env) : env_(std::move(env)) {}

  ::grpc::ServerUnaryReactor* Synthesize(::grpc::CallbackServerContext* context,
                                         const ::grpc::ByteBuffer* request,
                                         ::grpc::ByteBuffer* reply) override;
  ::grpc::ServerWriteReactor<::grpc::ByteBuffer>* SynthesizeStream(
      ::grpc::CallbackServerContext* context, const ::grpc::ByteBuffer* request) override;
  ::grpc::ServerBidiReactor<v1::StreamingSynthesizeRequest, v1::StreamingSynthesizeResponse>*
  StreamingSynthesize(::grpc::CallbackServerContext* context) override;
  ::grpc::ServerUnaryReactor* ListVoices(::grpc::CallbackServerContext* context,
                                         const ::grpc::ByteBuffer* request,
                                         ::grpc::ByteBuffer* reply) override;
  ::grpc::ServerUnaryReactor* ListModels(::grpc::CallbackServerContext* context,
                                         const ::grpc::ByteBuffer* request,
                                         ::grpc::ByteBuffer* reply) override;
  ::grpc::ServerUnaryReactor* RegisterVoice(::grpc::CallbackServerContext* context,
                                            const ::grpc::ByteBuffer* request,
                                            ::grpc::ByteBuffer* reply) override;
  ::grpc::ServerUnaryReactor* ListClonedVoices(::grpc::CallbackServerContext* context,
                                               const ::grpc::ByteBuffer* request,
                                               ::grpc::ByteBuffer* reply) override;
  ::grpc::ServerUnaryReactor* GetVoice(::grpc::CallbackServerContext* context,
                                       const ::grpc::ByteBuffer* request,
                                       ::grpc::ByteBuffer* reply) override;
  ::grpc::ServerUnaryReactor* DeleteVoice(::grpc::CallbackServerContext* context,
                                          const ::grpc::ByteBuffer* request,
                                          ::grpc::ByteBuffer* reply) override;

 private:
  HandlerEnv env_;
};

}  // namespace voxserve::transport::grpc
