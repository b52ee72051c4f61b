#include "transport/http/info_handlers.h"

#include <map>

#include "nlohmann/json.hpp"
#include "transport/http/error_response.h"
#include "transport/http/query_string.h"

namespace voxserve::transport::http {
namespace {

using nlohmann::json;

json VoicesJson(const std::vector<service::VoiceListing>& voices) {
  json data = json::array();
  for (const service::VoiceListing& voice : voices) {
    json entry = {{"id", voice.id},
                  {"object", "voice"},
                  {"model", voice.model},
                  {"engine", voice.engine},
                  {"language", voice.language},
                  {"sample_rate", voice.sample_rate},
                  {"description", voice.description}};
    if (!voice.alias_of.empty()) entry["alias_of"] = voice.alias_of;
    if (voice.cloned) {  // docs/voice-cloning.md: registered through /v1/audio/voices
      entry["type"] = "cloned";
      entry["name"] = voice.name;
    }
    data.push_back(std::move(entry));
  }
  return {{"object", "list"}, {"data", data}};
}

json ModelsJson(const service::TtsService& service) {
  json data = json::array();
  std::string default_model;
  for (const service::ModelStatus& model : service.ModelStatuses()) {
    if (default_model.empty()) default_model = model.id;
    data.push_back({{"id", model.id},
                    {"object", "model"},
                    {"owned_by", "voxserve"},
                    {"engine", model.engine},
                    {"state", service::ModelStateName(model.state)},
                    {"voices", model.voices}});
    if (!model.error.empty()) data.back()["error"] = model.error;
    if (!model.capabilities.empty()) data.back()["capabilities"] = model.capabilities;
  }
  if (!service.config().default_model.empty()) default_model = service.config().default_model;
  for (const char* alias : {"tts-1", "tts-1-hd", "gpt-4o-mini-tts"}) {
    data.push_back({{"id", alias}, {"object", "model"}, {"owned_by", "voxserve"},
                    {"alias_of", default_model}});
  }
  return {{"object", "list"}, {"data", data}};
}

json HealthJson(const service::TtsService& service, const ServerIdentity& identity) {
  // The overall status is read before the models: a model's failure is final, so a "failed"
  // status is then always shown beside the failed model (read the other way round, a model could
  // read "loading" and fail just before the status was taken).
  service::ServiceHealth status = service.Health();
  json models = json::array();
  for (const service::ModelStatus& model : service.ModelStatuses()) {
    json entry = {{"id", model.id},
                  {"engine", model.engine},
                  {"state", service::ModelStateName(model.state)},
                  {"queue_depth", model.queue_depth},
                  {"instances", model.instances},
                  {"isolation", model.isolation},
                  {"instances_live", model.instances_live},
                  {"instance_restarts", model.instance_restarts},
                  {"max_batch_size", model.max_batch_size}};
    if (!model.error.empty()) entry["error"] = model.error;
    models.push_back(std::move(entry));
  }
  double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                identity.started_at)
                      .count();
  json health = {{"status", service::ServiceHealthName(status)},
                 {"version", identity.version},
                 {"uptime_seconds", uptime},
                 {"in_flight", service.InFlight()},
                 {"draining", service.Draining()},
                 {"models", models}};
  if (std::string error = service.StartupError(); !error.empty()) health["error"] = error;
  if (const service::VoiceRegistry* voices = service.voice_registry()) {
    if (!voices->BackendName().empty()) {
      const std::string problem = voices->Problem();
      json store = {{"backend", std::string(voices->BackendName())},
                    {"status", problem.empty() ? "ok" : "unavailable"}};
      if (!problem.empty()) store["error"] = problem;
      health["voices"] = std::move(store);
    }
  }
  if (const store::DictionaryBackend* dictionaries = service.dictionary_store()) {
    const std::string problem = dictionaries->Problem();
    json store = {{"backend", std::string(dictionaries->BackendName())},
                  {"status", problem.empty() ? "ok" : "unavailable"}};
    if (!problem.empty()) store["error"] = problem;
    health["dictionaries"] = std::move(store);
  }
  if (identity.gpus != nullptr) {
    json gpus = json::array();
    for (const core::GpuStatus& gpu : identity.gpus->Read()) {
      gpus.push_back({{"index", gpu.index},
                      {"name", gpu.name},
                      {"utilization_percent", gpu.utilization_percent},
                      {"memory_utilization_percent", gpu.memory_utilization_percent},
                      {"memory_used_bytes", gpu.memory_used_bytes},
                      {"memory_total_bytes", gpu.memory_total_bytes}});
    }
    health["gpus"] = std::move(gpus);
  }
  return health;
}

HttpResponse Json(int status, const json& body) {
  return JsonResponse(status, body.dump(-1, ' ', false, json::error_handler_t::replace));
}

}  // namespace

void AddInfoRoutes(Router& router, service::TtsService& service,
                   const core::MetricsRegistry& metrics, const ServerIdentity& identity) {
  router.Add("GET", "/v1/voices", [&service](std::shared_ptr<HttpExchange> exchange) {
    auto query = ParseQuery(exchange->request().query);
    if (!query.ok()) return exchange->Respond(ErrorResponse(query.status()));
    service::VoiceFilter filter;
    if (auto it = query->find("model"); it != query->end()) filter.model = it->second;
    if (auto it = query->find("language"); it != query->end()) filter.language = it->second;
    exchange->Respond(Json(200, VoicesJson(service.ListVoices(filter))));
  });
  router.Add("GET", "/v1/models", [&service](std::shared_ptr<HttpExchange> exchange) {
    exchange->Respond(Json(200, ModelsJson(service)));
  });
  router.Add(
      "GET", "/health/live",
      [](std::shared_ptr<HttpExchange> exchange) {
        exchange->Respond(Json(200, {{"status", "live"}}));
      },
      auth::Resource::kHealth);
  router.Add(
      "GET", "/health/ready",
      [&service](std::shared_ptr<HttpExchange> exchange) {
        // Status is /health's (ready, degraded, starting, failed, draining), so a probe's log
        // tells "still loading" from "will never be ready".
        json body = {{"status", service::ServiceHealthName(service.Health())}};
        if (std::string error = service.StartupError(); !error.empty()) body["error"] = error;
        exchange->Respond(Json(service.Ready() ? 200 : 503, body));
      },
      auth::Resource::kHealth);
  router.Add(
      "GET", "/health",
      [&service, &identity](std::shared_ptr<HttpExchange> exchange) {
        exchange->Respond(Json(service.Ready() ? 200 : 503, HealthJson(service, identity)));
      },
      auth::Resource::kHealth);
  router.Add(
      "GET", "/metrics",
      [&metrics](std::shared_ptr<HttpExchange> exchange) {
        exchange->Respond(TextResponse(200, "text/plain; version=0.0.4; charset=utf-8",
                                       metrics.RenderText()));
      },
      auth::Resource::kMetrics);
}

}  // namespace voxserve::transport::http
