#include "transport/http/dictionary_handlers.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "store/dictionary_backend.h"
#include "service/pronunciation_dictionaries.h"
#include "text/lexicon/lexicon.h"
#include "transport/http/error_response.h"
#include "transport/http/multipart_form.h"
#include "transport/http/query_string.h"

namespace voxserve::transport::http {
namespace {

using json = nlohmann::json;
using store::DictionaryInfo;
using text::lexicon::Lexeme;
using text::lexicon::Lexicon;

// The form's text fields and part headers around the file.
constexpr size_t kFormOverheadBytes = 64 << 10;
// ElevenLabs' list: page_size 1..100, 30 by default.
constexpr int kDefaultPageSize = 30;
constexpr int kMaxPageSize = 100;

using text::lexicon::RuleCount;  // ElevenLabs counts one rule per string to replace

// GetPronunciationDictionaryMetadataResponse: ElevenLabs' fields (created_by names no user here:
// voxserve has API keys, not accounts).
json MetadataJson(const store::DictionaryInfo& info) {
  json body = {{"id", info.id},
               {"name", info.name},
               {"description", info.description},
               {"created_by", "voxserve"},
               {"creation_time_unix", info.created_at},
               {"latest_version_id", info.latest.version_id},
               {"latest_version_rules_num", RuleCount(*info.latest.lexicon)},
               {"permission_on_resource", "admin"},
               {"archived_time_unix", nullptr}};
  if (info.archived_at) body["archived_time_unix"] = *info.archived_at;
  return body;
}

// AddPronunciationDictionaryResponseModel.
json AddedJson(const store::DictionaryInfo& info) {
  return {{"id", info.id},
          {"name", info.name},
          {"description", info.description},
          {"created_by", "voxserve"},
          {"creation_time_unix", info.created_at},
          {"version_id", info.latest.version_id},
          {"version_rules_num", RuleCount(*info.latest.lexicon)},
          {"permission_on_resource", "admin"}};
}

// PronunciationDictionaryRulesResponseModel.
json RulesChangedJson(const store::DictionaryInfo& info) {
  return {{"id", info.id},
          {"version_id", info.latest.version_id},
          {"version_rules_num", RuleCount(*info.latest.lexicon)}};
}

HttpResponse Json(int status, const json& body) {
  return JsonResponse(status, body.dump(-1, ' ', false, json::error_handler_t::replace));
}

absl::Status WrongType(const std::string& field, const std::string& what) {
  return core::InvalidArgument(field + " must be " + what, field, "invalid_type");
}

absl::StatusOr<json> JsonBody(const HttpRequest& request) {
  json body = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) {
    return core::InvalidArgument("the body must be a JSON object", {}, "invalid_json");
  }
  return body;
}

absl::StatusOr<std::string> StringField(const json& body, const std::string& field, bool required) {
  auto it = body.find(field);
  if (it == body.end() || it->is_null()) {
    if (!required) return std::string();
    return core::InvalidArgument(field + " is required", field, "missing_field");
  }
  if (!it->is_string()) return WrongType(field, "a string");
  return it->get<std::string>();
}

// The "rules" array of a JSON body, as lexemes.
absl::StatusOr<std::vector<Lexeme>> RulesField(const json& body,
                                               const store::DictionaryStoreConfig& config) {
  auto rules = body.find("rules");
  if (rules == body.end() || rules->is_null()) {
    return core::InvalidArgument("rules is required", "rules", "missing_field");
  }
  return text::lexicon::ParseRules(rules->dump(), config.limits, "rules");
}

// Drops `strings` from every lexeme (a lexeme left without graphemes goes).
void RemoveStrings(Lexicon& lexicon, const std::set<std::string, std::less<>>& strings) {
  for (Lexeme& lexeme : lexicon.lexemes) {
    std::erase_if(lexeme.graphemes,
                  [&](const std::string& grapheme) { return strings.contains(grapheme); });
  }
  std::erase_if(lexicon.lexemes, [](const Lexeme& lexeme) { return lexeme.graphemes.empty(); });
}

// Shared by its routes' handlers; a write under way holds it too.
class DictionaryApi : public std::enable_shared_from_this<DictionaryApi> {
 public:
  DictionaryApi(service::TtsService& service, std::string base, ErrorFormatter format_error)
      : service_(service), base_(std::move(base)), format_error_(std::move(format_error)) {}

  const std::string& base() const { return base_; }

  void Handle(const std::shared_ptr<HttpExchange>& exchange) const {
    const HttpRequest& request = exchange->request();
    std::string_view rest = std::string_view(request.path).substr(base_.size());
    if (rest.starts_with('/')) rest.remove_prefix(1);
    if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    std::vector<std::string_view> parts;
    while (!rest.empty()) {
      const size_t slash = rest.find('/');
      parts.push_back(rest.substr(0, slash));
      rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    }
    const std::string& method = request.method;
    const bool get = method == "GET" || method == "HEAD";
    if (parts.empty()) return get ? List(exchange) : RefuseMethod(exchange, "GET, HEAD");
    if (parts.size() == 1 && (parts[0] == "add-from-file" || parts[0] == "add-from-rules")) {
      if (method != "POST") return RefuseMethod(exchange, "POST");
      return parts[0] == "add-from-file" ? AddFromFile(exchange) : AddFromRules(exchange);
    }
    if (Store(exchange) == nullptr) return;
    const std::string id(parts[0]);
    if (parts.size() == 1) {
      if (get) return Get(exchange, id);
      if (method == "PATCH") return Patch(exchange, id);
      if (method == "DELETE") return Delete(exchange, id);
      return RefuseMethod(exchange, "GET, HEAD, PATCH, DELETE");
    }
    if (parts.size() == 2 &&
        (parts[1] == "add-rules" || parts[1] == "remove-rules" || parts[1] == "set-rules")) {
      if (method != "POST") return RefuseMethod(exchange, "POST");
      return ChangeRules(exchange, id, parts[1]);
    }
    if (parts.size() == 3 && parts[2] == "download") {
      if (!get) return RefuseMethod(exchange, "GET, HEAD");
      return Download(exchange, id, std::string(parts[1]));
    }
    Refuse(exchange,
           core::NotFound("no route for " + core::Quoted(request.path), {}, "route_not_found"));
  }

 private:
  void Refuse(const std::shared_ptr<HttpExchange>& exchange, const absl::Status& status) const {
    exchange->Respond(format_error_ ? format_error_(status, exchange->request_id())
                                    : ErrorResponse(status));
  }

  void RefuseMethod(const std::shared_ptr<HttpExchange>& exchange, std::string_view allow) const {
    const absl::Status status =
        core::MethodNotAllowed(core::Quoted(exchange->request().method) + " is not allowed on " +
                               core::Quoted(exchange->request().path) + "; use " +
                               std::string(allow.substr(0, allow.find(','))));
    HttpResponse response =
        format_error_ ? format_error_(status, exchange->request_id()) : ErrorResponse(status);
    response.SetHeader("Allow", std::string(allow));
    exchange->Respond(std::move(response));
  }

  store::DictionaryBackend* Store(const std::shared_ptr<HttpExchange>& exchange) const {
    store::DictionaryBackend* store = service_.dictionaries().store();
    if (store == nullptr) Refuse(exchange, service::PronunciationDictionaries::Off());
    return store;
  }

  // Runs `write` on the store's thread and answers with its result: writes wait for the disk.
  void Write(const std::shared_ptr<HttpExchange>& exchange,
             std::function<absl::StatusOr<json>()> write) const {
    service_.dictionaries().RunWrite(
        [self = shared_from_this(), exchange, write = std::move(write)] {
          auto body = write();
          if (!body.ok()) return self->Refuse(exchange, body.status());
          exchange->Respond(Json(200, *body));  // Respond is safe cross thread
        });
  }

  // ElevenLabs' GET /v1/pronunciation-dictionaries: cursor, page_size, sort
  // (creation_time_unix | name), sort_direction (DESCENDING | ASCENDING), include_archived.
  void List(const std::shared_ptr<HttpExchange>& exchange) const {
    store::DictionaryBackend* store = Store(exchange);
    if (store == nullptr) return;
    auto query = ParseQuery(exchange->request().query);
    if (!query.ok()) return Refuse(exchange, query.status());
    auto param = [&](const std::string& key) -> std::string {
      auto it = query->find(key);
      return it == query->end() ? std::string() : it->second;
    };
    auto number = [&](const std::string& key, int fallback, int low,
                      int high) -> absl::StatusOr<int> {
      const std::string text = param(key);
      if (text.empty()) return fallback;
      int value = 0;
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) {
        return core::InvalidArgument(
            key + " must be an integer from " + std::to_string(low) + " to " + std::to_string(high),
            key, "invalid_value");
      }
      return value;
    };
    auto page_size = number("page_size", kDefaultPageSize, 1, kMaxPageSize);
    if (!page_size.ok()) return Refuse(exchange, page_size.status());
    auto offset = number("cursor", 0, 0, 1'000'000'000);
    if (!offset.ok()) return Refuse(exchange, offset.status());
    const std::string sort = param("sort").empty() ? "creation_time_unix" : param("sort");
    const std::string direction =
        param("sort_direction").empty() ? "DESCENDING" : param("sort_direction");
    if (sort != "creation_time_unix" && sort != "name") {
      return Refuse(exchange, core::InvalidArgument("sort must be creation_time_unix or name",
                                                    "sort", "invalid_value"));
    }
    if (direction != "DESCENDING" && direction != "ASCENDING") {
      return Refuse(exchange, core::InvalidArgument("sort_direction must be DESCENDING or "
                                                    "ASCENDING",
                                                    "sort_direction", "invalid_value"));
    }
    const std::string archived = param("include_archived");
    if (!archived.empty() && archived != "true" && archived != "false") {
      return Refuse(exchange, core::InvalidArgument("include_archived must be true or false",
                                                    "include_archived", "invalid_value"));
    }
    std::vector<store::DictionaryInfo> all = store->List(archived == "true");  // newest first
    if (sort == "name") {
      std::stable_sort(
          all.begin(), all.end(),
          [](const store::DictionaryInfo& a, const store::DictionaryInfo& b) { return a.name > b.name; });
    }
    if (direction == "ASCENDING") std::reverse(all.begin(), all.end());
    json page = json::array();
    const size_t begin = std::min(all.size(), static_cast<size_t>(*offset));
    const size_t end = std::min(all.size(), begin + static_cast<size_t>(*page_size));
    for (size_t i = begin; i < end; ++i) page.push_back(MetadataJson(all[i]));
    const bool more = end < all.size();
    exchange->Respond(Json(200, {{"pronunciation_dictionaries", std::move(page)},
                                 {"next_cursor", more ? json(std::to_string(end)) : json(nullptr)},
                                 {"has_more", more}}));
  }

  // ElevenLabs' add-from-file: a form with name (required), file (PLS, or voxserve's JSON;
  // optional: an empty dictionary), description; workspace_access is accepted and ignored.
  void AddFromFile(const std::shared_ptr<HttpExchange>& exchange) const {
    store::DictionaryBackend* store = Store(exchange);
    if (store == nullptr) return;
    const HttpRequest& request = exchange->request();
    auto parts = ParseMultipartForm(request.Header("content-type"), request.body);
    if (!parts.ok()) return Refuse(exchange, parts.status());
    std::string name, description;
    std::optional<std::string_view> file;
    bool has_name = false;
    std::map<std::string, int> seen;
    for (const MultipartPart& part : *parts) {
      if (part.name != "name" && part.name != "file" && part.name != "description") continue;
      if (++seen[part.name] > 1) {
        return Refuse(exchange, core::InvalidArgument("form field " + part.name + " is given twice",
                                                      part.name, "duplicate_field"));
      }
      if (part.name == "name") {
        name = std::string(part.body);
        has_name = true;
      } else if (part.name == "description") {
        description = std::string(part.body);
      } else {
        file = part.body;
      }
    }
    if (!has_name) {
      return Refuse(exchange,
                    core::InvalidArgument("form field name is required", "name", "missing_name"));
    }
    Lexicon lexicon;
    if (file) {
      if (file->size() > store->config().max_upload_bytes) {
        return Refuse(
            exchange,
            core::PayloadTooLarge("the dictionary file is larger than "
                                  "dictionaries.max_upload_bytes (" +
                                      std::to_string(store->config().max_upload_bytes) + " bytes)",
                                  "file"));
      }
      auto parsed = text::lexicon::ParseLexicon(*file, store->config().limits);
      if (!parsed.ok()) return Refuse(exchange, parsed.status());
      lexicon = *std::move(parsed);
    }
    Write(exchange,
          [store, name = std::move(name), description = std::move(description),
           lexicon = std::move(lexicon)]() mutable -> absl::StatusOr<json> {
            auto added = store->Add(name, description, std::move(lexicon));
            if (!added.ok()) return added.status();
            return AddedJson(*added);
          });
  }

  // ElevenLabs' add-from-rules: {"name", "rules": [...], "description"}.
  void AddFromRules(const std::shared_ptr<HttpExchange>& exchange) const {
    store::DictionaryBackend* store = Store(exchange);
    if (store == nullptr) return;
    auto body = JsonBody(exchange->request());
    if (!body.ok()) return Refuse(exchange, body.status());
    auto name = StringField(*body, "name", true);
    if (!name.ok()) return Refuse(exchange, name.status());
    auto description = StringField(*body, "description", false);
    if (!description.ok()) return Refuse(exchange, description.status());
    auto rules = RulesField(*body, store->config());
    if (!rules.ok()) return Refuse(exchange, rules.status());
    Lexicon lexicon;
    lexicon.lexemes = *std::move(rules);
    Write(exchange,
          [store, name = *std::move(name), description = *std::move(description),
           lexicon = std::move(lexicon)]() mutable -> absl::StatusOr<json> {
            auto added = store->Add(name, description, std::move(lexicon));
            if (!added.ok()) return added.status();
            return AddedJson(*added);
          });
  }

  // GetPronunciationDictionaryWithRulesResponseModel: the metadata and the latest version's
  // rules.
  void Get(const std::shared_ptr<HttpExchange>& exchange, const std::string& id) const {
    store::DictionaryBackend* store = Store(exchange);
    if (store == nullptr) return;
    auto info = store->Get(id);
    if (!info) return Refuse(exchange, NotFound(id));
    json body = MetadataJson(*info);
    body["rules"] = json::parse(text::lexicon::RulesJson(*info->latest.lexicon));
    exchange->Respond(Json(200, body));
  }

  // ElevenLabs' PATCH: {"name"?, "archived"?}.
  void Patch(const std::shared_ptr<HttpExchange>& exchange, const std::string& id) const {
    store::DictionaryBackend* store = Store(exchange);
    if (store == nullptr) return;
    auto body = JsonBody(exchange->request());
    if (!body.ok()) return Refuse(exchange, body.status());
    std::optional<std::string> name;
    std::optional<bool> archived;
    if (auto it = body->find("name"); it != body->end() && !it->is_null()) {
      if (!it->is_string()) return Refuse(exchange, WrongType("name", "a string"));
      name = it->get<std::string>();
    }
    if (auto it = body->find("archived"); it != body->end() && !it->is_null()) {
      if (!it->is_boolean()) return Refuse(exchange, WrongType("archived", "a boolean"));
      archived = it->get<bool>();
    }
    Write(exchange, [store, id, name, archived]() -> absl::StatusOr<json> {
      auto patched = store->Patch(id, name, archived);
      if (!patched.ok()) return patched.status();
      return MetadataJson(*patched);
    });
  }

  void Delete(const std::shared_ptr<HttpExchange>& exchange, const std::string& id) const {
    store::DictionaryBackend* store = Store(exchange);
    if (store == nullptr) return;
    Write(exchange, [store, id]() -> absl::StatusOr<json> {
      if (absl::Status status = store->Delete(id); !status.ok()) return status;
      return json{{"id", id}, {"object", "pronunciation_dictionary.deleted"}, {"deleted", true}};
    });
  }

  // add-rules {"rules"} (a rule for a string the dictionary has replaces it), remove-rules
  // {"rule_strings"}, set-rules {"rules"}: each makes a new version.
  void ChangeRules(const std::shared_ptr<HttpExchange>& exchange, const std::string& id,
                   std::string_view change) const {
    store::DictionaryBackend* store = Store(exchange);
    if (store == nullptr) return;
    auto body = JsonBody(exchange->request());
    if (!body.ok()) return Refuse(exchange, body.status());
    std::vector<Lexeme> rules;
    std::set<std::string, std::less<>> removed;
    if (change == "remove-rules") {
      auto strings = body->find("rule_strings");
      if (strings == body->end() || !strings->is_array()) {
        return Refuse(exchange, WrongType("rule_strings", "an array of strings"));
      }
      for (const json& string : *strings) {
        if (!string.is_string()) {
          return Refuse(exchange, WrongType("rule_strings", "an array of strings"));
        }
        removed.insert(string.get<std::string>());
      }
    } else {
      auto parsed = RulesField(*body, store->config());
      if (!parsed.ok()) return Refuse(exchange, parsed.status());
      rules = *std::move(parsed);
      for (const Lexeme& lexeme : rules)
        removed.insert(lexeme.graphemes.begin(), lexeme.graphemes.end());
    }
    const bool replace_all = change == "set-rules";
    const size_t max_rules = store->config().limits.max_rules;
    Write(exchange,
          [store, id, rules = std::move(rules), removed = std::move(removed), replace_all,
           max_rules]() -> absl::StatusOr<json> {
            auto updated = store->Update(id, [&](const Lexicon& latest) -> absl::StatusOr<Lexicon> {
              Lexicon next = latest;
              if (replace_all) {
                next.lexemes.clear();
              } else {
                RemoveStrings(next, removed);
              }
              next.lexemes.insert(next.lexemes.end(), rules.begin(), rules.end());
              if (RuleCount(next) > max_rules) {
                return core::InvalidArgument("the dictionary would hold more than " +
                                                 std::to_string(max_rules) +
                                                 " rules (dictionaries.max_rules)",
                                             "rules", "too_many_rules");
              }
              return next;
            });
            if (!updated.ok()) return updated.status();
            return RulesChangedJson(*updated);
          });
  }

  // A version as a W3C PLS file (ElevenLabs' download).
  void Download(const std::shared_ptr<HttpExchange>& exchange, const std::string& id,
                const std::string& version_id) const {
    store::DictionaryBackend* store = Store(exchange);
    if (store == nullptr) return;
    auto version = store->Version(id, version_id);
    if (!version.ok()) return Refuse(exchange, version.status());
    HttpResponse response =
        TextResponse(200, "application/pls+xml", text::lexicon::WritePls(*version->lexicon));
    response.SetHeader("Content-Disposition",
                       "attachment; filename=\"" + id + "_" + version->version_id + ".pls\"");
    exchange->Respond(std::move(response));
  }

  static absl::Status NotFound(const std::string& id) {
    return core::NotFound("no pronunciation dictionary " + core::Quoted(id),
                          "pronunciation_dictionary_id", "dictionary_not_found");
  }

  service::TtsService& service_;
  const std::string base_;  // e.g. "/v1/pronunciation-dictionaries"
  const ErrorFormatter format_error_;
};

}  // namespace

void AddDictionaryRoutes(Router& router, service::TtsService& service, std::string_view prefix,
                         ErrorFormatter format_error) {
  auto api = std::make_shared<DictionaryApi>(
      service, std::string(prefix) + std::string(kDictionariesPath), format_error);
  Handler handler = [api](std::shared_ptr<HttpExchange> exchange) { api->Handle(exchange); };
  const std::string& base = api->base();
  router.Add("GET", base, handler);
  // Exact routes for the uploads, for their body limit (a PLS file may pass
  // http.max_body_bytes).
  const size_t upload = service.config().dictionaries.max_upload_bytes + kFormOverheadBytes;
  for (const char* add : {"/add-from-file", "/add-from-rules"}) {
    router.Add("POST", base + add, handler);
    router.SetBodyLimit("POST", base + add, upload);
  }
  router.AddPrefix(base + "/", handler, auth::Resource::kApi, std::move(format_error));
}

}  // namespace voxserve::transport::http
