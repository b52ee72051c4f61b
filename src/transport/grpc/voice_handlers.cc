#include "transport/grpc/voice_handlers.h"

#include "transport/grpc/unary_call.h"
#include "voxserve/v1/tts.pb.h"

namespace voxserve::transport::grpc {
namespace {

void Fill(const store::StoredVoice& voice, v1::ClonedVoice* out) {
  const store::VoiceMetadata& m = voice.metadata;
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
                                               const ::grpc::ByteBuffer* request_bytes,
                                               ::grpc::ByteBuffer* reply) {
  auto* call = new UnaryCall<v1::RegisterVoiceRequest, v1::ClonedVoice>(env, context,
                                                                        "RegisterVoice", reply);
  absl::StatusOr<CallStart> start = call->Start(request_bytes);
  if (!start.ok()) return call;  // answered
  // The gate speaks in synthesis requests; a probe one carries the key's allowed models.
  service::SynthesisRequest probe;
  start->Prepare(probe);
  const v1::RegisterVoiceRequest& request = call->request();
  service::VoiceRegistration registration;
  registration.model = request.model();
  registration.name = request.name();
  registration.transcript = request.transcript();
  registration.audio = request.audio_sample();
  registration.allowed_models = std::move(probe.allowed_models);
  auto held = std::make_shared<CallStart>(*std::move(start));  // the grant lasts the call
  env.service.voices().Register(std::move(registration),
                                [call, held](absl::StatusOr<store::StoredVoice> stored) {
                                  if (stored.ok()) Fill(*stored, call->response());
                                  call->Answer(stored.status());
                                });
  return call;
}

::grpc::ServerUnaryReactor* AnswerListClonedVoices(HandlerEnv& env,
                                                   ::grpc::CallbackServerContext* context,
                                                   const ::grpc::ByteBuffer* request_bytes,
                                                   ::grpc::ByteBuffer* reply) {
  auto* call = new UnaryCall<v1::ListClonedVoicesRequest, v1::ListClonedVoicesResponse>(
      env, context, "ListClonedVoices", reply);
  if (!call->Start(request_bytes).ok()) return call;  // answered
  for (const store::StoredVoice& voice : env.service.voices().List(call->request().model())) {
    Fill(voice, call->response()->add_voices());
  }
  call->Answer(absl::OkStatus());
  return call;
}

::grpc::ServerUnaryReactor* AnswerGetVoice(HandlerEnv& env, ::grpc::CallbackServerContext* context,
                                           const ::grpc::ByteBuffer* request_bytes,
                                           ::grpc::ByteBuffer* reply) {
  auto* call = new UnaryCall<v1::GetVoiceRequest, v1::ClonedVoice>(env, context, "GetVoice", reply);
  if (!call->Start(request_bytes).ok()) return call;  // answered
  auto voice = env.service.voices().Get(call->request().id());
  if (voice.ok()) Fill(*voice, call->response());
  call->Answer(voice.status());
  return call;
}

::grpc::ServerUnaryReactor* AnswerDeleteVoice(HandlerEnv& env,
                                              ::grpc::CallbackServerContext* context,
                                              const ::grpc::ByteBuffer* request_bytes,
                                              ::grpc::ByteBuffer* reply) {
  auto* call = new UnaryCall<v1::DeleteVoiceRequest, v1::DeleteVoiceResponse>(env, context,
                                                                              "DeleteVoice", reply);
  if (!call->Start(request_bytes).ok()) return call;  // answered
  const std::string id = call->request().id();
  // Answered from the store's thread: it may wait for its disk or database.
  env.service.voices().DeleteAsync(id, [call, id](absl::Status status) {
    if (status.ok()) {
      call->response()->set_id(id);
      call->response()->set_deleted(true);
    }
    call->Answer(status);
  });
  return call;
}

}  // namespace voxserve::transport::grpc
