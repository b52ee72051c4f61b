#include "transport/grpc/catalog_handlers.h"

#include "transport/grpc/unary_call.h"
#include "voxserve/v1/tts.pb.h"

namespace voxserve::transport::grpc {
namespace {

v1::ModelState ToProtoState(service::ModelState state) {
  switch (state) {
    case service::ModelState::kLoading:
      return v1::MODEL_STATE_LOADING;
    case service::ModelState::kWarmingUp:
      return v1::MODEL_STATE_WARMING_UP;
    case service::ModelState::kReady:
      return v1::MODEL_STATE_READY;
    case service::ModelState::kFailed:
      return v1::MODEL_STATE_FAILED;
  }
  return v1::MODEL_STATE_UNSPECIFIED;
}

}  // namespace

::grpc::ServerUnaryReactor* AnswerListVoices(HandlerEnv& env,
                                             ::grpc::CallbackServerContext* context,
                                             const ::grpc::ByteBuffer* request_bytes,
                                             ::grpc::ByteBuffer* reply) {
  auto* call = new UnaryCall<v1::ListVoicesRequest, v1::ListVoicesResponse>(env, context,
                                                                            "ListVoices", reply);
  if (!call->Start(request_bytes).ok()) return call;  // answered
  const v1::ListVoicesRequest& request = call->request();
  service::VoiceFilter filter{request.model(), request.language()};
  for (const service::VoiceListing& listing : env.service.ListVoices(filter)) {
    v1::Voice* voice = call->response()->add_voices();
    voice->set_id(listing.id);
    voice->set_model(listing.model);
    voice->set_engine(listing.engine);
    voice->set_language(listing.language);
    voice->set_sample_rate(listing.sample_rate);
    voice->set_description(listing.description);
    voice->set_alias_of(listing.alias_of);
    voice->set_cloned(listing.cloned);
    voice->set_name(listing.name);
  }
  call->Answer(absl::OkStatus());
  return call;
}

::grpc::ServerUnaryReactor* AnswerListModels(HandlerEnv& env,
                                             ::grpc::CallbackServerContext* context,
                                             const ::grpc::ByteBuffer* request_bytes,
                                             ::grpc::ByteBuffer* reply) {
  auto* call = new UnaryCall<v1::ListModelsRequest, v1::ListModelsResponse>(env, context,
                                                                            "ListModels", reply);
  if (!call->Start(request_bytes).ok()) return call;  // answered
  v1::ListModelsResponse* response = call->response();
  std::string default_model = env.service.config().default_model;
  for (const service::ModelStatus& status : env.service.ModelStatuses()) {
    if (default_model.empty()) default_model = status.id;
    v1::Model* model = response->add_models();
    model->set_id(status.id);
    model->set_engine(status.engine);
    model->set_state(ToProtoState(status.state));
    model->set_voices(static_cast<int32_t>(status.voices));
    model->set_error(status.error);
  }
  // As REST: OpenAI's model names stand for the default model.
  for (const char* alias : {"tts-1", "tts-1-hd", "gpt-4o-mini-tts"}) {
    v1::Model* model = response->add_models();
    model->set_id(alias);
    model->set_alias_of(default_model);
  }
  call->Answer(absl::OkStatus());
  return call;
}

}  // namespace voxserve::transport::grpc
