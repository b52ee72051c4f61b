#include "transport/http/voice_handlers.h"

#include <map>

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "transport/http/error_response.h"
#include "transport/http/multipart_form.h"
#include "transport/http/query_string.h"

namespace voxserve::transport::http {
namespace {

using json = nlohmann::json;

constexpr const char* kCollection = "/v1/audio/voices";
constexpr const char* kItem = "/v1/audio/voices/*";
// The form's text fields and part headers around the audio: a 4096-character transcript is at
// most 16 KiB of UTF-8; 64 KiB leaves room for headers and a client's extra fields.
constexpr size_t kFormOverheadBytes = 64 << 10;

// OpenAI's voice object (developers.openai.com/api/reference/resources/audio/subresources/
// voices: "id", "object": "audio.voice", "name", "created_at"); the rest is voxserve's.
json VoiceJson(const store::StoredVoice& voice) {
  const store::VoiceMetadata& m = voice.metadata;
  return {{"id", m.id},
          {"object", "audio.voice"},
          {"name", m.name},
          {"created_at", m.created_at},
          {"model", m.model},
          {"family", m.family},
          {"transcript", m.transcript},
          {"prompt_seconds", m.prompt_seconds},
          {"bytes", voice.file_bytes}};
}

HttpResponse Json(int status, const json& body) {
  return JsonResponse(status, body.dump(-1, ' ', false, json::error_handler_t::replace));
}

// The fields of the upload form. OpenAI's: audio_sample (file), name, consent (a consent
// recording's id; voxserve keeps no consent records and ignores it). voxserve's: transcript,
// model, and "audio" as another name for audio_sample (vLLM-Omni's and several clients' name).
// Unknown fields are ignored, as OpenAI's API grows; a known field twice is refused.
struct VoiceForm {
  std::string name, transcript, model, audio;
  bool has_audio = false, has_name = false;
};

absl::StatusOr<VoiceForm> ReadForm(const HttpRequest& request) {
  auto parts = ParseMultipartForm(request.Header("content-type"), request.body);
  if (!parts.ok()) return parts.status();
  VoiceForm form;
  std::map<std::string, int> seen;
  for (const MultipartPart& part : *parts) {
    std::string field = part.name == "audio" ? "audio_sample" : part.name;
    if (field != "audio_sample" && field != "name" && field != "transcript" && field != "model") {
      continue;
    }
    if (++seen[field] > 1) {
      return core::InvalidArgument("form field " + field + " is given twice", field,
                                   "duplicate_field");
    }
    std::string value(part.body);
    if (field == "audio_sample") {
      form.audio = std::move(value);
      form.has_audio = true;
    } else if (field == "name") {
      form.name = std::move(value);
      form.has_name = true;
    } else if (field == "transcript") {
      form.transcript = std::move(value);
    } else {
      form.model = std::move(value);
    }
  }
  if (!form.has_audio) {
    return core::InvalidArgument("form field audio_sample (the recording, a file) is required",
                                 "audio_sample", "missing_audio");
  }
  if (!form.has_name) {
    return core::InvalidArgument("form field name is required", "name", "missing_name");
  }
  return form;
}

void HandleRegister(service::TtsService& service, const std::shared_ptr<HttpExchange>& exchange) {
  auto form = ReadForm(exchange->request());
  if (!form.ok()) return exchange->Respond(ErrorResponse(form.status()));
  service::VoiceRegistration registration;
  registration.model = std::move(form->model);
  registration.name = std::move(form->name);
  registration.transcript = std::move(form->transcript);
  registration.audio = std::move(form->audio);
  registration.allowed_models = exchange->auth().allowed_models;
  exchange->AnnotateLog(
      [model = registration.model](core::RequestLogEntry& entry) { entry.model = model; });
  // The exchange may be answered from a cloning worker: Respond is safe cross thread.
  service.voices().Register(std::move(registration),
                            [exchange](absl::StatusOr<store::StoredVoice> stored) {
                              if (!stored.ok()) {
                                return exchange->Respond(ErrorResponse(stored.status()));
                              }
                              exchange->Respond(Json(200, VoiceJson(*stored)));
                            });
}

std::string IdFromPath(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

void AddVoiceRoutes(Router& router, service::TtsService& service) {
  router.Add("POST", kCollection, [&service](std::shared_ptr<HttpExchange> exchange) {
    HandleRegister(service, exchange);
  });
  router.SetBodyLimit("POST", kCollection,
                      service.config().voices.max_upload_bytes + kFormOverheadBytes);
  router.Add("GET", kCollection, [&service](std::shared_ptr<HttpExchange> exchange) {
    auto query = ParseQuery(exchange->request().query);
    if (!query.ok()) return exchange->Respond(ErrorResponse(query.status()));
    std::string model;
    if (auto it = query->find("model"); it != query->end()) model = it->second;
    json data = json::array();
    for (const store::StoredVoice& voice : service.voices().List(model)) {
      data.push_back(VoiceJson(voice));
    }
    exchange->Respond(Json(200, {{"object", "list"}, {"data", std::move(data)}}));
  });
  router.Add("GET", kItem, [&service](std::shared_ptr<HttpExchange> exchange) {
    auto voice = service.voices().Get(IdFromPath(exchange->request().path));
    if (!voice.ok()) return exchange->Respond(ErrorResponse(voice.status()));
    exchange->Respond(Json(200, VoiceJson(*voice)));
  });
  router.Add("DELETE", kItem, [&service](std::shared_ptr<HttpExchange> exchange) {
    const std::string id = IdFromPath(exchange->request().path);
    // The store may wait for its disk or database: answered from its thread (Respond is safe
    // cross thread).
    service.voices().DeleteAsync(id, [exchange, id](absl::Status status) {
      if (!status.ok()) return exchange->Respond(ErrorResponse(status));
      // OpenAI's deletion answers ({"id", "object": "<type>.deleted", "deleted": true}).
      exchange->Respond(
          Json(200, {{"id", id}, {"object", "audio.voice.deleted"}, {"deleted", true}}));
    });
  });
}

}  // namespace voxserve::transport::http
