// The client's half of voxserve's speech stream protocol (GET /v1/audio/speech/stream, see the
// server's transport/websocket/websocket_messages.h): the messages a Synthesize call sends, the
// server's JSON events read back, and how an error event, a close code or a refused upgrade
// becomes the same Outcome REST would give. Pure functions: no sockets.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"
#include "client/transport.h"

namespace voxserve::client {

inline constexpr std::string_view kSpeechStreamPath = "/v1/audio/speech/stream";

// The first message: {"model", "voice", "response_format", "speed"[, "instructions"]}.
std::string WsConfigMessage(const SpeechRequest& request);

// The input as {"text": ...} messages, the last one with "close": true (speak everything, then
// `done`). Cut into pieces of at most `max_piece_bytes` at UTF-8 character boundaries so that
// no message passes the server's websocket.max_message_bytes (64 KiB by default); the server
// joins the pieces into sentences again.
std::vector<std::string> WsTextMessages(std::string_view input, size_t max_piece_bytes);

// One JSON text message from the server.
struct WsEvent {
  enum class Type { kReady, kSegmentDone, kDone, kError, kOther };
  Type type = Type::kOther;
  std::string request_id;               // ready
  std::string response_format;          // ready
  int sample_rate = 0;                  // segment_done
  std::optional<double> audio_seconds;  // done: usage.audio_seconds
  Outcome error;  // error: kHttp with the status REST would answer and its fields
};
// Errors: not a JSON object with a string "type".
std::optional<WsEvent> ParseWsEvent(std::string_view text);

// The Outcome of a connection the server closed with `code` before `done` and without an error
// event saying more: 1001 going away and 1013 try again later as 503 (retried), 1008 policy as
// 400, 1009 too big as 413, 1011 server error as 500, 1003 as a protocol error; 1000 without
// `done` and anything else as a broken stream.
Outcome WsCloseOutcome(int code, std::string_view reason);

// "audio/pcm", ... for a response_format name (what REST sends as Content-Type).
std::string WsContentType(std::string_view response_format);

}  // namespace voxserve::client
