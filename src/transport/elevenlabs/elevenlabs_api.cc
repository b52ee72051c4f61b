#include "transport/elevenlabs/elevenlabs_api.h"

#include <boost/asio/strand.hpp>
#include <string>

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "transport/elevenlabs/error_body.h"
#include "transport/elevenlabs/tts_exchange.h"
#include "transport/elevenlabs/tts_request.h"
#include "transport/http/dictionary_handlers.h"

namespace voxserve::transport::elevenlabs {
namespace {

using nlohmann::json;

constexpr std::string_view kTtsPrefix = "text-to-speech/";
constexpr std::string_view kSingleUseTokenPrefix = "single-use-token/";

http::HttpResponse Json(int status, const json& body) {
  return http::JsonResponse(status, body.dump(-1, ' ', false, json::error_handler_t::replace));
}

// GET /v1/voices: {"voices": [Voice]}; of Voice's fields voxserve knows the id, a name (the id),
// a description and labels (https://elevenlabs.io/docs/api-reference/voices/search).
json VoicesJson(const std::vector<service::VoiceListing>& voices) {
  json list = json::array();
  for (const service::VoiceListing& voice : voices) {
    list.push_back({{"voice_id", voice.id},
                    {"name", voice.id},
                    {"category", "premade"},
                    {"description", voice.description},
                    {"labels", {{"language", voice.language}, {"model", voice.model}}}});
  }
  return {{"voices", list}};
}

// GET /v1/models: [Model] (https://elevenlabs.io/docs/api-reference/models/list).
json ModelsJson(const std::vector<service::ModelStatus>& models) {
  json list = json::array();
  for (const service::ModelStatus& model : models) {
    list.push_back({{"model_id", model.id},
                    {"name", model.id},
                    {"description", "voxserve " + model.engine + " model"},
                    {"can_do_text_to_speech", true},
                    {"can_do_voice_conversion", false},
                    {"can_use_style", false},
                    {"can_use_speaker_boost", false},
                    {"serves_pro_voices", false},
                    {"languages", json::array()}});
  }
  return list;
}

struct TtsPath {
  std::string voice_id;
  TtsRoute route = TtsRoute::kConvert;
};

// "{voice_id}", "{voice_id}/stream", ".../with-timestamps", ".../stream/with-timestamps".
std::optional<TtsPath> ParseTtsPath(std::string_view rest) {
  TtsPath path;
  size_t slash = rest.find('/');
  path.voice_id = std::string(rest.substr(0, slash));
  std::string_view tail = slash == std::string_view::npos ? "" : rest.substr(slash);
  if (tail.empty()) {
    path.route = TtsRoute::kConvert;
  } else if (tail == "/stream") {
    path.route = TtsRoute::kStream;
  } else if (tail == "/with-timestamps") {
    path.route = TtsRoute::kWithTimestamps;
  } else if (tail == "/stream/with-timestamps") {
    path.route = TtsRoute::kStreamWithTimestamps;
  } else {
    return std::nullopt;
  }
  if (path.voice_id.empty()) return std::nullopt;
  return path;
}

}  // namespace

ElevenLabsApi::ElevenLabsApi(service::TtsService& service, const auth::Authenticator* authenticator)
    : service_(service), authenticator_(authenticator) {}

ElevenLabsApi::~ElevenLabsApi() { pool_.join(); }

void ElevenLabsApi::AddRoutes(http::Router& router) {
  // ElevenLabs' pronunciation-dictionary API is voxserve's own (one implementation, two
  // prefixes), answering in ElevenLabs' error shape here.
  http::AddDictionaryRoutes(router, service_, "/elevenlabs",
                            [](const absl::Status& status, std::string_view request_id) {
                              return ErrorResponse(status, request_id);
                            });
  router.AddPrefix(
      std::string(kPathPrefix),
      [this](std::shared_ptr<http::HttpExchange> exchange) { Handle(exchange); },
      auth::Resource::kApi,
      [](const absl::Status& status, std::string_view request_id) {
        return ErrorResponse(status, request_id);
      });
}

void ElevenLabsApi::Handle(const std::shared_ptr<http::HttpExchange>& exchange) {
  const http::HttpRequest& request = exchange->request();
  std::string_view rest = std::string_view(request.path).substr(kPathPrefix.size());
  const std::string& id = exchange->request_id();
  auto refuse = [&](const absl::Status& status) { exchange->Respond(ErrorResponse(status, id)); };
  auto refuse_method = [&](std::string_view allow) {
    http::HttpResponse response = ErrorResponse(
        core::MethodNotAllowed(core::Quoted(request.method) + " is not allowed; use " +
                               std::string(allow.substr(0, allow.find(',')))),
        id);
    response.SetHeader("Allow", std::string(allow));  // RFC 9110 §15.5.6
    exchange->Respond(std::move(response));
  };
  const bool get = request.method == "GET" || request.method == "HEAD";

  if (rest == "voices" || rest == "models") {
    if (!get) return refuse_method("GET, HEAD");
    if (rest == "voices") return exchange->Respond(Json(200, VoicesJson(service_.ListVoices())));
    return exchange->Respond(Json(200, ModelsJson(service_.ModelStatuses())));
  }
  if (rest.starts_with(kSingleUseTokenPrefix)) {
    if (request.method != "POST") return refuse_method("POST");
    return MintSingleUseToken(exchange, rest.substr(kSingleUseTokenPrefix.size()));
  }
  std::optional<TtsPath> path;
  if (rest.starts_with(kTtsPrefix)) path = ParseTtsPath(rest.substr(kTtsPrefix.size()));
  if (!path) {
    return refuse(core::NotFound(
        "no ElevenLabs route for " + core::Quoted(request.path) +
            " (voxserve offers text-to-speech, voices, models, pronunciation-dictionaries and "
            "single-use-token)",
        {}, "route_not_found"));
  }
  if (request.method != "POST") {
    return refuse_method("POST");
  }
  auto parsed = ParseTtsRequest(request, path->voice_id);
  if (!parsed.ok()) return refuse(service_.RejectUnparsed(parsed.status()));

  auth::Admission admission;
  if (authenticator_ != nullptr) {
    auto admitted = authenticator_->Admit(exchange->auth());
    if (!admitted.ok()) return refuse(admitted.status());
    admission = std::move(*admitted);
  }
  TtsExchange::Start(service_, boost::asio::make_strand(pool_), exchange, *std::move(parsed),
                     path->route, std::move(admission));
}

// POST /v1/single-use-token/{token_type}: ElevenLabs' tokens for frontends, single use and 15
// minutes long as theirs, minted as POST /v1/tokens mints (transport/auth/access_token.h).
void ElevenLabsApi::MintSingleUseToken(const std::shared_ptr<http::HttpExchange>& exchange,
                                       std::string_view token_type) {
  const std::string& id = exchange->request_id();
  if (token_type != "tts_websocket") {
    return exchange->Respond(ErrorResponse(
        core::InvalidArgument("token_type " + core::Quoted(token_type) +
                                  " is not served here: voxserve mints tts_websocket tokens",
                              "token_type", "invalid_token_type"),
        id));
  }
  auth::TokenRequest request;
  request.expires_in_seconds = 15 * 60;
  request.single_use = true;
  auto minted = authenticator_->MintToken(exchange->auth(), request);
  if (!minted.ok()) return exchange->Respond(ErrorResponse(minted.status(), id));
  http::HttpResponse response = Json(200, nlohmann::json{{"token", minted->token}});
  response.SetHeader("Cache-Control", "no-store");
  exchange->Respond(std::move(response));
}

}  // namespace voxserve::transport::elevenlabs
