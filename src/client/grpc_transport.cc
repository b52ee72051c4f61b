#include "client/grpc_transport.h"

#include <grpcpp/grpcpp.h>

#include <fstream>
#include <sstream>

#include "nlohmann/json.hpp"
#include "voxserve/v1/tts.grpc.pb.h"

namespace voxserve::client {
namespace {

namespace pb = ::voxserve::v1;

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

int HttpEquivalent(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::FAILED_PRECONDITION:
      return 412;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    default:
      return 500;
  }
}

const char* CodeName(grpc::StatusCode code) {
  static constexpr const char* kNames[] = {"OK",
                                           "CANCELLED",
                                           "UNKNOWN",
                                           "INVALID_ARGUMENT",
                                           "DEADLINE_EXCEEDED",
                                           "NOT_FOUND",
                                           "ALREADY_EXISTS",
                                           "PERMISSION_DENIED",
                                           "RESOURCE_EXHAUSTED",
                                           "FAILED_PRECONDITION",
                                           "ABORTED",
                                           "OUT_OF_RANGE",
                                           "UNIMPLEMENTED",
                                           "INTERNAL",
                                           "UNAVAILABLE",
                                           "DATA_LOSS",
                                           "UNAUTHENTICATED"};
  auto index = static_cast<size_t>(code);
  return index < std::size(kNames) ? kNames[index] : "UNKNOWN";
}

Outcome FromGrpc(const grpc::Status& status, const grpc::ClientContext& context) {
  if (status.ok()) return {};
  std::string message =
      std::string("gRPC ") + CodeName(status.error_code()) + ": " + status.error_message();
  if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    return Outcome::Error(ErrorKind::kTimeout, message);
  }
  Outcome outcome = Outcome::Error(ErrorKind::kHttp, message);
  outcome.http_status = HttpEquivalent(status.error_code());
  const auto& trailers = context.GetServerTrailingMetadata();
  if (auto it = trailers.find("retry-after-ms"); it != trailers.end()) {
    long long ms = std::atoll(std::string(it->second.data(), it->second.size()).c_str());
    if (ms >= 0) outcome.retry_after_seconds = static_cast<int>((ms + 999) / 1000);
  }
  return outcome;
}

pb::AudioFormat FormatFor(const std::string& name) {
  if (name == "pcm") return pb::AUDIO_FORMAT_PCM;
  if (name == "wav") return pb::AUDIO_FORMAT_WAV;
  if (name == "mp3") return pb::AUDIO_FORMAT_MP3;
  if (name == "opus") return pb::AUDIO_FORMAT_OPUS;
  if (name == "aac") return pb::AUDIO_FORMAT_AAC;
  if (name == "flac") return pb::AUDIO_FORMAT_FLAC;
  return pb::AUDIO_FORMAT_UNSPECIFIED;
}

std::string ContentType(pb::AudioFormat format) {
  switch (format) {
    case pb::AUDIO_FORMAT_PCM:
      return "audio/pcm";
    case pb::AUDIO_FORMAT_WAV:
      return "audio/wav";
    case pb::AUDIO_FORMAT_MP3:
      return "audio/mpeg";
    case pb::AUDIO_FORMAT_OPUS:
      return "audio/ogg";
    case pb::AUDIO_FORMAT_AAC:
      return "audio/aac";
    case pb::AUDIO_FORMAT_FLAC:
      return "audio/flac";
    default:
      return "application/octet-stream";
  }
}

std::string StateName(pb::ModelState state) {
  switch (state) {
    case pb::MODEL_STATE_LOADING:
      return "loading";
    case pb::MODEL_STATE_WARMING_UP:
      return "warming_up";
    case pb::MODEL_STATE_READY:
      return "ready";
    case pb::MODEL_STATE_FAILED:
      return "failed";
    default:
      return "";
  }
}

}  // namespace

struct GrpcTransport::Channel {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<pb::TextToSpeech::Stub> stub;
};

GrpcTransport::GrpcTransport(std::unique_ptr<Channel> channel, std::string api_key)
    : channel_(std::move(channel)), api_key_(std::move(api_key)) {}

GrpcTransport::~GrpcTransport() = default;

absl::StatusOr<std::unique_ptr<Transport>> GrpcTransport::Create(const Endpoint& endpoint,
                                                                 const ClientOptions& options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);  // a whole long WAV may exceed gRPC's 4 MiB default
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (endpoint.tls()) {
    grpc::SslCredentialsOptions ssl;
    const TlsOptions& tls = options.tls;
    for (auto [path, target] : {std::pair{&tls.ca_file, &ssl.pem_root_certs},
                                {&tls.cert_file, &ssl.pem_cert_chain},
                                {&tls.key_file, &ssl.pem_private_key}}) {
      if (path->empty()) continue;
      auto text = ReadFile(*path);
      if (!text) return absl::InvalidArgumentError("cannot read " + *path);
      *target = *text;
    }
    credentials = grpc::SslCredentials(ssl);
    if (!tls.server_name.empty()) args.SetSslTargetNameOverride(tls.server_name);
  }
  auto channel = std::make_unique<Channel>();
  channel->channel = grpc::CreateCustomChannel(endpoint.HostHeader(), credentials, args);
  channel->stub = pb::TextToSpeech::NewStub(channel->channel);
  return std::unique_ptr<Transport>(new GrpcTransport(std::move(channel), options.api_key));
}

namespace {

void Prepare(grpc::ClientContext& context, Deadline deadline, const std::string& api_key,
             const std::string& request_id) {
  // gRPC deadlines are on the system clock.
  context.set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::duration_cast<std::chrono::system_clock::duration>(deadline - Clock::now()));
  if (!api_key.empty()) context.AddMetadata("authorization", "Bearer " + api_key);
  if (!request_id.empty()) context.AddMetadata("x-request-id", request_id);
}

std::string RequestIdOf(const grpc::ClientContext& context) {
  const auto& metadata = context.GetServerInitialMetadata();
  auto it = metadata.find("x-request-id");
  return it == metadata.end() ? "" : std::string(it->second.data(), it->second.size());
}

}  // namespace

Outcome GrpcTransport::Synthesize(const SpeechRequest& request, Deadline deadline,
                                  SpeechSink& sink) {
  pb::SynthesizeRequest message;
  message.set_text(request.input);
  pb::SynthesisOptions* options = message.mutable_options();
  options->set_model(request.model);
  options->set_voice(request.voice);
  options->set_format(FormatFor(request.response_format));
  options->set_speed(request.speed);
  options->set_instructions(request.instructions);
  grpc::ClientContext context;
  Prepare(context, deadline, api_key_, request.request_id);

  if (request.stream == StreamFormat::kNone) {
    pb::SynthesizeResponse response;
    grpc::Status status = channel_->stub->Synthesize(&context, message, &response);
    if (!status.ok()) return FromGrpc(status, context);
    sink.OnHead(ContentType(response.format()), response.sample_rate(), RequestIdOf(context));
    sink.OnAudio(response.audio());
    sink.OnAudioSeconds(response.usage().audio_seconds());
    return {};
  }
  std::unique_ptr<grpc::ClientReader<pb::SynthesizeStreamResponse>> reader =
      channel_->stub->SynthesizeStream(&context, message);
  pb::SynthesizeStreamResponse event;
  bool head = false;
  bool done = false;
  while (reader->Read(&event)) {
    if (event.has_audio()) {
      if (!head) {
        head = true;
        sink.OnHead(ContentType(event.audio().format()), event.audio().sample_rate(),
                    RequestIdOf(context));
      }
      sink.OnAudio(event.audio().audio());
    } else if (event.has_done()) {
      done = true;
      sink.OnAudioSeconds(event.done().usage().audio_seconds());
    }
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return FromGrpc(status, context);
  if (!done) return Outcome::Error(ErrorKind::kStreamBroken, "gRPC stream ended without done");
  return {};
}

Outcome GrpcTransport::ListVoices(const VoiceFilter& filter, Deadline deadline,
                                  std::vector<Voice>* voices) {
  pb::ListVoicesRequest request;
  request.set_model(filter.model);
  request.set_language(filter.language);
  pb::ListVoicesResponse response;
  grpc::ClientContext context;
  Prepare(context, deadline, api_key_, "");
  grpc::Status status = channel_->stub->ListVoices(&context, request, &response);
  if (!status.ok()) return FromGrpc(status, context);
  for (const pb::Voice& v : response.voices()) {
    voices->push_back(Voice{v.id(), v.model(), v.engine(), v.language(), v.description(),
                            v.alias_of(), v.sample_rate()});
  }
  return {};
}

Outcome GrpcTransport::ListModels(Deadline deadline, std::vector<Model>* models) {
  pb::ListModelsResponse response;
  grpc::ClientContext context;
  Prepare(context, deadline, api_key_, "");
  grpc::Status status = channel_->stub->ListModels(&context, pb::ListModelsRequest(), &response);
  if (!status.ok()) return FromGrpc(status, context);
  for (const pb::Model& m : response.models()) {
    models->push_back(
        Model{m.id(), m.engine(), StateName(m.state()), m.alias_of(), m.error(), m.voices()});
  }
  return {};
}

Outcome GrpcTransport::CheckHealth(HealthProbe probe, Deadline deadline, Health* health) {
  std::vector<Model> models;
  Outcome outcome = ListModels(deadline, &models);
  if (!outcome.ok()) return outcome;
  nlohmann::json states = nlohmann::json::object();
  bool ready = true;
  for (const Model& model : models) {
    if (!model.alias_of.empty()) continue;
    states[model.id] = model.state;
    ready = ready && model.state == "ready";
  }
  // The process answers, so it is live; ready when every model is.
  health->http_status = probe == HealthProbe::kLive || ready ? 200 : 503;
  health->body =
      nlohmann::json{{"status", ready ? "ready" : "not_ready"}, {"models", states}}.dump();
  return {};
}

}  // namespace voxserve::client
