// voxserve.v1.TextToSpeech on gRPC's callback API: each method hands its call to the handler
// for its shape (one file each). Safe cross thread; owned by GrpcServer, outlives every call.
#pragma once

#include "transport/grpc/handler_env.h"
#include "voxserve/v1/tts.grpc.pb.h"

namespace voxserve::transport::grpc {

class TtsGrpcService final : public v1::TextToSpeech::CallbackService {
 public:
  explicit TtsGrpcService(HandlerEnv env) : env_(std::move(env)) {}

  ::grpc::ServerUnaryReactor* Synthesize(::grpc::CallbackServerContext* context,
                                         const v1::SynthesizeRequest* request,
                                         v1::SynthesizeResponse* response) override;
  ::grpc::ServerWriteReactor<v1::SynthesizeStreamResponse>* SynthesizeStream(
      ::grpc::CallbackServerContext* context, const v1::SynthesizeRequest* request) override;
  ::grpc::ServerBidiReactor<v1::StreamingSynthesizeRequest, v1::StreamingSynthesizeResponse>*
  StreamingSynthesize(::grpc::CallbackServerContext* context) override;
  ::grpc::ServerUnaryReactor* ListVoices(::grpc::CallbackServerContext* context,
                                         const v1::ListVoicesRequest* request,
                                         v1::ListVoicesResponse* response) override;
  ::grpc::ServerUnaryReactor* ListModels(::grpc::CallbackServerContext* context,
                                         const v1::ListModelsRequest* request,
                                         v1::ListModelsResponse* response) override;
  ::grpc::ServerUnaryReactor* RegisterVoice(::grpc::CallbackServerContext* context,
                                            const v1::RegisterVoiceRequest* request,
                                            v1::ClonedVoice* response) override;
  ::grpc::ServerUnaryReactor* ListClonedVoices(::grpc::CallbackServerContext* context,
                                               const v1::ListClonedVoicesRequest* request,
                                               v1::ListClonedVoicesResponse* response) override;
  ::grpc::ServerUnaryReactor* GetVoice(::grpc::CallbackServerContext* context,
                                       const v1::GetVoiceRequest* request,
                                       v1::ClonedVoice* response) override;
  ::grpc::ServerUnaryReactor* DeleteVoice(::grpc::CallbackServerContext* context,
                                          const v1::DeleteVoiceRequest* request,
                                          v1::DeleteVoiceResponse* response) override;

 private:
  HandlerEnv env_;
};

}  // namespace voxserve::transport::grpc
