#include "client/http_transport.h"

#include <cctype>

#include "absl/strings/escaping.h"
#include "client/sse_parser.h"
#include "nlohmann/json.hpp"

namespace voxserve::client {
namespace {

using nlohmann::json;

// An error body is a short JSON object; more than this is not worth keeping.
constexpr size_t kMaxErrorBody = 64 * 1024;

const char* StreamFormatName(StreamFormat format) {
  switch (format) {
    case StreamFormat::kAudio:
      return "audio";
    case StreamFormat::kSse:
      return "sse";
    case StreamFormat::kNone:
      break;
  }
  return nullptr;
}

// Percent-encodes a query value (RFC 3986 unreserved characters pass).
std::string QueryEscape(const std::string& value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// Fills type/code/param from an OpenAI-style {"error": {...}} body; returns its message.
std::string ReadErrorFields(const std::string& body, Outcome* outcome) {
  json parsed = json::parse(body, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("error") || !parsed["error"].is_object()) return "";
  const json& error = parsed["error"];
  auto text = [&error](const char* key) {
    return error.contains(key) && error[key].is_string() ? error[key].get<std::string>() : "";
  };
  outcome->type = text("type");
  outcome->code = text("code");
  outcome->param = text("param");
  return text("message");
}

// The server's error answer as an Outcome.
Outcome HttpError(const ResponseHead& head, const std::string& body) {
  Outcome outcome;
  outcome.kind = ErrorKind::kHttp;
  outcome.http_status = head.status;
  outcome.retry_after_seconds = head.retry_after_seconds;
  outcome.message = "HTTP " + std::to_string(head.status);
  if (std::string message = ReadErrorFields(body, &outcome); !message.empty()) {
    outcome.message += ": " + message;
  }
  return outcome;
}

Outcome ProtocolError(const std::string& what) {
  return Outcome::Error(ErrorKind::kProtocol, what);
}

}  // namespace

HttpTransport::HttpTransport(Endpoint endpoint, boost::asio::ssl::context* tls,
                             const ClientOptions& options)
    : endpoint_(std::move(endpoint)),
      api_key_(options.api_key),
      user_agent_(options.user_agent),
      connect_timeout_(options.connect_timeout),
      pool_(endpoint_, tls,
            PoolSettings{options.max_connections_per_endpoint, options.idle_timeout,
                         options.tls.server_name, options.tls.verify_peer}) {}

std::string HttpTransport::Serialize(const Call& call) const {
  std::string wire = std::string(call.method) + " " + endpoint_.path_prefix + call.path +
                     " HTTP/1.1\r\nHost: " + endpoint_.HostHeader() +
                     "\r\nUser-Agent: " + user_agent_ + "\r\nAccept: */*\r\n";
  if (!api_key_.empty()) wire += "Authorization: Bearer " + api_key_ + "\r\n";
  if (!call.request_id.empty()) wire += "X-Request-Id: " + call.request_id + "\r\n";
  if (std::string_view(call.method) == "POST") {
    wire +=
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(call.body.size()) +
        "\r\n";
  }
  wire += "\r\n";
  wire += call.body;
  return wire;
}

Outcome HttpTransport::Exchange(const Call& call, Deadline deadline, const HeadHandler& on_head,
                                const BodyHandler& on_body) {
  const std::string wire = Serialize(call);
  Outcome outcome;
  for (bool fresh : {false, true}) {
    PooledConnection connection;
    outcome = pool_.Acquire(deadline, Clock::now() + connect_timeout_, fresh, &connection);
    if (!outcome.ok()) return outcome;
    outcome = connection->Write(wire, deadline);
    ResponseHead head;
    if (outcome.ok()) outcome = connection->ReadHead(deadline, &head);
    if (!outcome.ok()) {
      // The server closes idle keep-alive connections when it likes; the request never reached
      // it, so it goes again on a new connection without counting as a retry.
      if (connection.reused() && outcome.kind == ErrorKind::kConnectionLost) continue;
      return outcome;
    }
    if (head.status >= 400 && !call.error_statuses_are_answers) {
      std::string body;
      connection->ReadBody(deadline, [&body](std::string_view bytes) {
        if (body.size() < kMaxErrorBody) body.append(bytes);
      });
      return HttpError(head, body);
    }
    on_head(head);
    return connection->ReadBody(deadline, on_body);
  }
  return outcome;
}

Outcome HttpTransport::Synthesize(const SpeechRequest& request, Deadline deadline,
                                  SpeechSink& sink) {
  json body = {{"model", request.model},
               {"input", request.input},
               {"voice", request.voice},
               {"response_format", request.response_format},
               {"speed", request.speed}};
  if (!request.instructions.empty()) body["instructions"] = request.instructions;
  if (const char* stream = StreamFormatName(request.stream)) {
    body["stream_format"] = stream;
  } else {
    body["stream"] = false;  // the route streams unless told otherwise, as OpenAI's
  }
  Call call{"POST", "/v1/audio/speech", body.dump(-1, ' ', false, json::error_handler_t::replace),
            request.request_id};

  bool sse = false;
  bool done_event = false;
  Outcome stream_error;  // an error event or a bad event inside the SSE stream
  SseParser events([&](const std::string& data) {
    if (!stream_error.ok()) return;
    json event = json::parse(data, nullptr, false);
    std::string type = event.is_object() ? event.value("type", "") : "";
    if (type == "speech.audio.delta") {
      std::string audio;
      if (!event.contains("audio") || !event["audio"].is_string() ||
          !absl::Base64Unescape(event["audio"].get<std::string>(), &audio)) {
        stream_error = ProtocolError("SSE delta without valid base64 audio");
        return;
      }
      sink.OnAudio(audio);
    } else if (type == "speech.audio.done") {
      done_event = true;
      // voxserve counts output tokens as milliseconds of audio.
      if (event.contains("usage") && event["usage"].is_object()) {
        sink.OnAudioSeconds(event["usage"].value("output_tokens", 0.0) / 1000.0);
      }
    } else if (type == "error") {
      stream_error.kind = ErrorKind::kStreamBroken;
      stream_error.message = "error event in the stream: " + ReadErrorFields(data, &stream_error);
    }
  });
  Outcome outcome = Exchange(
      call, deadline,
      [&](const ResponseHead& head) {
        sse = head.content_type.starts_with("text/event-stream");
        sink.OnHead(head.content_type, head.sample_rate, head.request_id);
      },
      [&](std::string_view bytes) {
        if (sse) {
          events.Feed(bytes);
        } else {
          sink.OnAudio(bytes);
        }
      });
  if (!outcome.ok()) return outcome;
  if (!stream_error.ok()) return stream_error;
  if (sse && !done_event) {
    return Outcome::Error(ErrorKind::kStreamBroken,
                          "the SSE stream ended without speech.audio.done");
  }
  return {};
}

Outcome HttpTransport::GetJson(const std::string& path, Deadline deadline, std::string* body) {
  return Exchange(
      Call{"GET", path, "", ""}, deadline, [](const ResponseHead&) {},
      [body](std::string_view bytes) { body->append(bytes); });
}

Outcome HttpTransport::ListVoices(const VoiceFilter& filter, Deadline deadline,
                                  std::vector<Voice>* voices) {
  std::string query;
  if (!filter.model.empty()) query += "&model=" + QueryEscape(filter.model);
  if (!filter.language.empty()) query += "&language=" + QueryEscape(filter.language);
  if (!query.empty()) query[0] = '?';
  std::string body;
  if (Outcome outcome = GetJson("/v1/voices" + query, deadline, &body); !outcome.ok()) {
    return outcome;
  }
  json parsed = json::parse(body, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("data") || !parsed["data"].is_array()) {
    return ProtocolError("/v1/voices did not answer with {\"data\": [...]}");
  }
  for (const json& entry : parsed["data"]) {
    if (!entry.is_object()) continue;
    voices->push_back(Voice{entry.value("id", ""), entry.value("model", ""),
                            entry.value("engine", ""), entry.value("language", ""),
                            entry.value("description", ""), entry.value("alias_of", ""),
                            entry.value("sample_rate", 0)});
  }
  return {};
}

Outcome HttpTransport::ListModels(Deadline deadline, std::vector<Model>* models) {
  std::string body;
  if (Outcome outcome = GetJson("/v1/models", deadline, &body); !outcome.ok()) return outcome;
  json parsed = json::parse(body, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("data") || !parsed["data"].is_array()) {
    return ProtocolError("/v1/models did not answer with {\"data\": [...]}");
  }
  for (const json& entry : parsed["data"]) {
    if (!entry.is_object()) continue;
    models->push_back(Model{entry.value("id", ""), entry.value("engine", ""),
                            entry.value("state", ""), entry.value("alias_of", ""),
                            entry.value("error", ""), entry.value("voices", 0)});
  }
  return {};
}

Outcome HttpTransport::CheckHealth(HealthProbe probe, Deadline deadline, Health* health) {
  const char* path = probe == HealthProbe::kLive    ? "/health/live"
                     : probe == HealthProbe::kReady ? "/health/ready"
                                                    : "/health";
  Call call{"GET", path, "", ""};
  call.error_statuses_are_answers = true;
  Outcome outcome = Exchange(
      call, deadline, [health](const ResponseHead& head) { health->http_status = head.status; },
      [health](std::string_view bytes) { health->body.append(bytes); });
  if (!outcome.ok()) return outcome;
  if (health->http_status != 200 && health->http_status != 503) {
    ResponseHead head;
    head.status = health->http_status;
    return HttpError(head, health->body);
  }
  return outcome;
}

}  // namespace voxserve::client
