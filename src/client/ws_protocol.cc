#include "client/ws_protocol.h"

#include "nlohmann/json.hpp"

namespace voxserve::client {
namespace {

using nlohmann::json;

std::string Dump(const json& message) {
  return message.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Text(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string WsConfigMessage(const SpeechRequest& request) {
  json config = {{"model", request.model},
                 {"voice", request.voice},
                 {"response_format", request.response_format},
                 {"speed", request.speed}};
  if (!request.instructions.empty()) config["instructions"] = request.instructions;
  return Dump(config);
}

std::vector<std::string> WsTextMessages(std::string_view input, size_t max_piece_bytes) {
  if (max_piece_bytes < 4) max_piece_bytes = 4;  // room for one UTF-8 character
  std::vector<std::string> messages;
  do {
    size_t cut = std::min(input.size(), max_piece_bytes);
    // Back to a character boundary: never split a multi-byte sequence (continuation bytes are
    // 10xxxxxx).
    while (cut < input.size() && cut > 0 &&
           (static_cast<unsigned char>(input[cut]) & 0xC0) == 0x80) {
      --cut;
    }
    if (cut == 0) cut = std::min(input.size(), max_piece_bytes);  // not UTF-8: cut anyway
    json message = {{"text", std::string(input.substr(0, cut))}};
    input.remove_prefix(cut);
    if (input.empty()) message["close"] = true;
    messages.push_back(Dump(message));
  } while (!input.empty());
  return messages;
}

std::optional<WsEvent> ParseWsEvent(std::string_view text) {
  json event = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!event.is_object() || !event.contains("type") || !event["type"].is_string()) {
    return std::nullopt;
  }
  WsEvent parsed;
  const std::string type = event["type"].get<std::string>();
  if (type == "ready") {
    parsed.type = WsEvent::Type::kReady;
    parsed.request_id = Text(event, "request_id");
    parsed.response_format = Text(event, "response_format");
  } else if (type == "segment_done") {
    parsed.type = WsEvent::Type::kSegmentDone;
    if (event.contains("sample_rate") && event["sample_rate"].is_number_integer()) {
      parsed.sample_rate = event["sample_rate"].get<int>();
    }
  } else if (type == "done") {
    parsed.type = WsEvent::Type::kDone;
    if (event.contains("usage") && event["usage"].is_object() &&
        event["usage"].contains("audio_seconds") && event["usage"]["audio_seconds"].is_number()) {
      parsed.audio_seconds = event["usage"]["audio_seconds"].get<double>();
    }
  } else if (type == "error") {
    parsed.type = WsEvent::Type::kError;
    Outcome& error = parsed.error;
    error.kind = ErrorKind::kHttp;
    // The server puts the status REST would answer; without one it is a server error.
    error.http_status = event.contains("status") && event["status"].is_number_integer()
                            ? event["status"].get<int>()
                            : 500;
    if (error.http_status < 400 || error.http_status > 599) error.http_status = 500;
    std::string message;
    if (event.contains("error") && event["error"].is_object()) {
      const json& fields = event["error"];
      error.type = Text(fields, "type");
      error.code = Text(fields, "code");
      error.param = Text(fields, "param");
      message = Text(fields, "message");
    }
    error.message = "HTTP " + std::to_string(error.http_status) + " (WebSocket error event)";
    if (!message.empty()) error.message += ": " + message;
  }
  return parsed;
}

Outcome WsCloseOutcome(int code, std::string_view reason) {
  const std::string said = "the server closed the WebSocket with " + std::to_string(code) +
                           (reason.empty() ? "" : " (" + std::string(reason) + ")");
  auto http = [&said](int status) {
    Outcome outcome =
        Outcome::Error(ErrorKind::kHttp, "HTTP " + std::to_string(status) + ": " + said);
    outcome.http_status = status;
    return outcome;
  };
  switch (code) {
    case 1001:  // going away: the server is shutting down; another may take the call
    case 1013:  // try again later: the model's queue is full or it is still loading
      return http(503);
    case 1008:  // policy: a bad or refused message
      return http(400);
    case 1009:  // a message over websocket.max_message_bytes
      return http(413);
    case 1011:  // synthesis failed or its deadline passed
      return http(500);
    case 1003:  // the server took our message for binary: we never send one
      return Outcome::Error(ErrorKind::kProtocol, said);
    default:
      break;
  }
  return Outcome::Error(ErrorKind::kStreamBroken, said + " before its \"done\" event");
}

std::string WsContentType(std::string_view response_format) {
  if (response_format == "mp3") return "audio/mpeg";
  if (response_format.empty()) return "audio/pcm";  // the protocol's default
  return "audio/" + std::string(response_format);   // pcm, wav, flac, opus, aac
}

}  // namespace voxserve::client
