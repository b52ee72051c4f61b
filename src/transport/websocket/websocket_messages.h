// The JSON of the speech stream protocol (GET /v1/audio/speech/stream): what a client sends (a
// config, then text, flush and close messages), the events the server answers with, and the
// close code each error ends a connection with. Pure functions: no sockets, no service.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "audio/audio_format.h"
#include "service/synthesis_request.h"
#include "transport/http/timestamps_json.h"

namespace voxserve::transport::websocket {

// The first message: {"model", "voice" (a name or {"id"}), "response_format" (default "pcm"),
// "speed", "instructions", "voice_mode", "seed", "timeout_ms", "timestamps" ("word" | "char",
// docs/timings.md), "cache_control" (docs/response-cache.md), "apply_text_normalization"
// (docs/text-normalization.md)}; every
// field is optional. Types are checked here,
// ranges by the service (service::CheckRequestOptions), as for every transport.
struct StreamConfig {
  std::string model;  // empty: the default model
  std::string voice;  // empty: the model's default voice
  audio::AudioFormat format = audio::AudioFormat::kPcm;
  double speed = 1.0;
  std::string instructions;
  std::string voice_mode;    // a cloned voice's mode (service::ParseVoiceMode checks the name)
  std::string input_format;  // "ssml", "text" or empty (docs/ssml.md; the service checks it)
  std::optional<uint64_t> seed;
  std::optional<std::chrono::milliseconds> timeout;  // per sentence, from when it is complete
  http::TimestampsMode timestamps = http::TimestampsMode::kNone;  // on each segment_done
  // "cache_control": HTTP's Cache-Control values (no-cache, no-store), for every sentence.
  service::CachePolicy cache_policy = service::CachePolicy::kUse;
  std::optional<bool> normalize_text;  // "apply_text_normalization": auto, on, off
  // "pronunciation_dictionary_locators" (docs/pronunciation-dictionaries.md)
  std::vector<service::DictionaryLocator> dictionaries;
};

// Every later message: {"text": "..."}, {"flush": true}, {"close": true}, or several at once
// ({"text": "Bye.", "close": true}: the text first, then the flush or close).
struct ClientMessage {
  std::optional<std::string> text;
  bool flush = false;  // speak what is held now, even an unfinished sentence
  bool close = false;  // no more text: speak the rest, send `done`, close with 1000
};

// InvalidArgument naming the field at fault (codes invalid_json, invalid_type, missing_config,
// repeated_config, empty_message, ...).
absl::StatusOr<StreamConfig> ParseConfigMessage(std::string_view json);
absl::StatusOr<ClientMessage> ParseClientMessage(std::string_view json);

// RFC 6455 §7.4.1 and the IANA registry.
enum class CloseCode : std::uint16_t {
  kNormal = 1000,          // `done` was sent: everything asked for was spoken
  kGoingAway = 1001,       // the server is shutting down
  kUnsupportedData = 1003,  // a binary message: the protocol is JSON text
  kPolicy = 1008,          // a bad message, refused request, idle too long
  kTooBig = 1009,          // a message over websocket.max_message_bytes
  kServerError = 1011,     // synthesis failed, deadline passed
  kTryAgainLater = 1013,   // the model's queue is full or the model is still loading
};

CloseCode CloseCodeFor(const absl::Status& status);

// Server events, each one JSON text message with a "type".
// {"type": "ready", "request_id", "response_format"}: the config was accepted.
std::string ReadyEvent(std::string_view request_id, audio::AudioFormat format);

// One sentence's audio has been sent: {"type": "segment_done", "index", "text", "audio_bytes",
// "sample_rate", "usage": {...}, "timings": {...}}; with `timestamps` also "timestamps": [...]
// (its words or characters, in the stream's audio) and "timestamps_kind" ("exact" |
// "estimated"). ("timings" is the latency figures, older than word timings.)
std::string SegmentDoneEvent(const service::SentenceReport& report,
                             http::TimestampsMode timestamps = http::TimestampsMode::kNone);

// After `close`: {"type": "done", "model", "voice", "usage": {...}, "timings": {...}} with the
// totals of every sentence; timings count from the upgrade.
std::string DoneEvent(const service::SynthesisSummary& totals);

// {"type": "error", "status": <the HTTP status REST would answer>, "error": {"message", "type",
// "param", "code"}}: the body of an HTTP error (transport/http/error_response.h).
std::string ErrorEvent(const absl::Status& status);

}  // namespace voxserve::transport::websocket
