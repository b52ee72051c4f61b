#include "transport/grpc/voice_handlers.h"

#include "transport/grpc/call_start.h"
#include "transport/grpc/status_mapping.h"

namespace voxserve::transport::grpc {
namespace {

::grpc::ServerUnaryReactor* Answer(HandlerEnv& env, ::grpc::CallbackServerContext* context,
                                   const char* method, const absl::Status& status) {
  ::grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  ::grpc::Status answer = FinishStatus(*context, status);
  env.metrics.CountCall(method, answer.error_code());
  reactor->Finish(std::move(answer));
  return reactor;
}

void Fill(const service::StoredVoice& voice, v1::ClonedVoice* out) {
  const service::VoiceMetadata& m = voice.metadata;
  out->set_id(m.id);
  out->set_name(m.name);
  out->set_created_at(m.created_at);
  out->set_model(m.model);
  out->set_family(m.family);
  out->set_transcript(m.transcript);
  out->set_prompt_seconds(m.prompt_seconds);
  out->set_bytes(static_cast<int64_t>(voice.file_bytes));
}

}  // namespace

::grpc::ServerUnaryReactor* StartRegisterVoice(HandlerEnv& env,
                                               ::grpc::CallbackServerContext* context,
                                               const v1::RegisterVoiceRequest* request,
                                               v1::ClonedVoice* response) {
  constexpr const char* kMethod = "RegisterVoice";
  absl::StatusOr<CallStart> call = StartCall(*context, kMethod, env.gate);
  if (!call.ok()) return Answer(env, context, kMethod, call.status());
  // The gate speaks in synthesis requests; a probe one carries the key's allowed models.
  service::SynthesisRequest probe;
  call->Prepare(probe);
  service::VoiceRegistration registration;
  registration.model = request->model();
  registration.name = request->name();
  registration.transcript = request->transcript();
  registration.audio = request->audio_sample();
  registration.allowed_models = std::move(probe.allowed_models);
  ::grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto held = std::make_shared<CallStart>(*std::move(call));  // the grant lasts the call
  env.service.voices().Register(
      std::move(registration),
      [&env, context, reactor, response, held](absl::StatusOr<service::StoredVoice> stored) {
        if (stored.ok()) Fill(*stored, response);
        ::grpc::Status answer = FinishStatus(*context, stored.status());
        env.metrics.CountCall(kMethod, answer.error_code());
        reactor->Finish(std::move(answer));
      });
  return reactor;
}

::grpc::ServerUnaryReactor* AnswerListClonedVoices(HandlerEnv& env,
                                                   ::grpc::CallbackServerContext* context,
                                                   const v1::ListClonedVoicesRequest* request,
                                                   v1::ListClonedVoicesResponse* response) {
  constexpr const char* kMethod = "ListClonedVoices";
  absl::StatusOr<CallStart> call = StartCall(*context, kMethod, env.gate);
  if (!call.ok()) return Answer(env, context, kMethod, call.status());
  for (const service::StoredVoice& voice : env.service.voices().List(request->model())) {
    Fill(voice, response->add_voices());
  }
  return Answer(env, context, kMethod, absl::OkStatus());
}

::grpc::ServerUnaryReactor* AnswerGetVoice(HandlerEnv& env, ::grpc::CallbackServerContext* context,
                                           const v1::GetVoiceRequest* request,
                                           v1::ClonedVoice* response) {
  constexpr const char* kMethod = "GetVoice";
  absl::StatusOr<CallStart> call = StartCall(*context, kMethod, env.gate);
  if (!call.ok()) return Answer(env, context, kMethod, call.status());
  auto voice = env.service.voices().Get(request->id());
  if (voice.ok()) Fill(*voice, response);
  return Answer(env, context, kMethod, voice.status());
}

::grpc::ServerUnaryReactor* AnswerDeleteVoice(HandlerEnv& env,
                                              ::grpc::CallbackServerContext* context,
                                              const v1::DeleteVoiceRequest* request,
                                              v1::DeleteVoiceResponse* response) {
  constexpr const char* kMethod = "DeleteVoice";
  absl::StatusOr<CallStart> call = StartCall(*context, kMethod, env.gate);
  if (!call.ok()) return Answer(env, context, kMethod, call.status());
  absl::Status status = env.service.voices().Delete(request->id());
  if (status.ok()) {
    response->set_id(request->id());
    response->set_deleted(true);
  }
  return Answer(env, context, kMethod, status);
}

}  // namespace voxserve::transport::grpc
