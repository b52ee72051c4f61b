#include "transport/http/token_handlers.h"

#include "core/error.h"
#include "transport/http/error_response.h"
#include "transport/http/json_body.h"

namespace voxserve::transport::http {
namespace {

using nlohmann::json;

absl::Status WrongType(const std::string& field, const char* expected) {
  return core::InvalidArgument(field + " must be " + expected, field, "invalid_type");
}

}  // namespace

absl::StatusOr<auth::TokenRequest> ParseTokenRequest(const HttpRequest& request) {
  auth::TokenRequest parsed;
  if (request.body.empty()) return parsed;
  auto body = ParseJsonObject(request);
  if (!body.ok()) return body.status();
  if (auto found = body->find("expires_in"); found != body->end() && !found->is_null()) {
    if (!found->is_number_integer()) return WrongType("expires_in", "an integer (seconds)");
    parsed.expires_in_seconds = found->get<int64_t>();
  }
  if (auto found = body->find("single_use"); found != body->end() && !found->is_null()) {
    if (!found->is_boolean()) return WrongType("single_use", "a boolean");
    parsed.single_use = found->get<bool>();
  }
  if (auto found = body->find("models"); found != body->end() && !found->is_null()) {
    if (!found->is_array()) return WrongType("models", "an array of model ids");
    for (const json& model : *found) {
      if (!model.is_string() || model.get<std::string>().empty()) {
        return WrongType("models", "an array of model ids");
      }
      parsed.models.push_back(model.get<std::string>());
    }
  }
  return parsed;
}

json MintedTokenJson(const auth::MintedToken& minted, int64_t expires_in) {
  return {{"token", minted.token},
          {"expires_at", minted.claims.expires_at},
          {"expires_in", expires_in},
          {"single_use", minted.claims.single_use},
          {"models", minted.claims.models}};
}

void AddTokenRoutes(Router& router, const auth::Authenticator& authenticator) {
  router.Add("POST", "/v1/tokens", [&authenticator](std::shared_ptr<HttpExchange> exchange) {
    auto request = ParseTokenRequest(exchange->request());
    if (!request.ok()) return exchange->Respond(ErrorResponse(request.status()));
    auto minted = authenticator.MintToken(exchange->auth(), *request);
    if (!minted.ok()) return exchange->Respond(ErrorResponse(minted.status()));
    HttpResponse response =
        JsonResponse(200, MintedTokenJson(*minted, request->expires_in_seconds).dump());
    response.SetHeader("Cache-Control", "no-store");  // a credential: no cache may keep it
    exchange->Respond(std::move(response));
  });
}

}  // namespace voxserve::transport::http
