#include "transport/grpc/catalog_handlers.h"

#include "transport/grpc/call_start.h"
#include "transport/grpc/status_mapping.h"

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

// gRPC's default reactor finishes the call; the count goes with it.
::grpc::ServerUnaryReactor* Answer(HandlerEnv& env, ::grpc::CallbackServerContext* context,
                                   const char* method, const absl::Status& status) {
  ::grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  ::grpc::Status answer = FinishStatus(*context, status);
  env.metrics.CountCall(method, answer.error_code());
  reactor->Finish(std::move(answer));
  return reactor;
}

}  // namespace

::grpc::ServerUnaryReactor* AnswerListVoices(HandlerEnv& env,
                                             ::grpc::CallbackServerContext* context,
                                             const v1::ListVoicesRequest* request,
                                             v1::ListVoicesResponse* response) {
  constexpr const char* kMethod = "ListVoices";
  absl::StatusOr<CallStart> call = StartCall(*context, kMethod, env.gate);
  if (!call.ok()) return Answer(env, context, kMethod, call.status());
  service::VoiceFilter filter{request->model(), request->language()};
  for (const service::VoiceListing& listing : env.service.ListVoices(filter)) {
    v1::Voice* voice = response->add_voices();
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
  return Answer(env, context, kMethod, absl::OkStatus());
}

::grpc::ServerUnaryReactor* AnswerListModels(HandlerEnv& env,
                                             ::grpc::CallbackServerContext* context,
                                             const v1::ListModelsRequest* /*request*/,
                                             v1::ListModelsResponse* response) {
  constexpr const char* kMethod = "ListModels";
  absl::StatusOr<CallStart> call = StartCall(*context, kMethod, env.gate);
  if (!call.ok()) return Answer(env, context, kMethod, call.status());
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
  return Answer(env, context, kMethod, absl::OkStatus());
}

}  // namespace voxserve::transport::grpc
