// Reads the JSON bodies of the speech routes into a SynthesisRequest, with errors that name the
// field at fault. Two shapes: OpenAI's /v1/audio/speech and voxserve's own /v1/synthesize.
#pragma once

#include "absl/status/statusor.h"
#include "service/synthesis_request.h"
#include "transport/http/http_message.h"
#include "transport/http/timestamps_json.h"

namespace voxserve::transport::http {

enum class StreamMode { kNone, kAudio, kSse };

struct ParsedSpeechRequest {
  service::SynthesisRequest synthesis;
  StreamMode stream = StreamMode::kNone;
  // "timestamps" (docs/timings.md): a whole file becomes a JSON body {audio, timestamps}; SSE
  // gets a speech.audio.timestamps event after each sentence's audio.
  TimestampsMode timestamps = TimestampsMode::kNone;
};

// POST /v1/audio/speech: {model, input, voice (string or {"id"}), response_format="mp3",
// speed=1.0, instructions, stream_format ("audio" | "sse"; left out, a chunked audio stream as
// OpenAI's), timeout_ms, sample_rate, timestamps, voice_mode, seed, apply_text_normalization and
// stream (false: the whole file) (voxserve extensions)}.
absl::StatusOr<ParsedSpeechRequest> ParseOpenAiSpeechRequest(const HttpRequest& request);

// POST /v1/synthesize and /tts: {text, voice, speed, model, response_format="wav", stream,
// timeout_ms, sample_rate, timestamps, instructions, voice_mode, seed,
// apply_text_normalization}; stream + timestamps
// streams SSE.
absl::StatusOr<ParsedSpeechRequest> ParseSynthesizeRequest(const HttpRequest& request);

}  // namespace voxserve::transport::http
