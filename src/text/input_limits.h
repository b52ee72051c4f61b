// The limits every text input passes before any work is queued for it.
#pragma once

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"

namespace voxserve::text {

struct InputLimits {
  std::size_t max_input_chars = 4096;  // OpenAI's documented maximum for /v1/audio/speech
  // The text of one incremental stream (WebSocket, gRPC bidi, ElevenLabs' stream-input), all its
  // pieces together: text arrives as an LLM writes it, so a stream may say far more than one
  // request. 100,000 characters is about two hours of English speech, past the stream's audio
  // bound (limits.max_stream_audio_seconds) at any ordinary pace.
  std::size_t max_stream_input_chars = 100'000;
};

// Valid UTF-8, something to speak (HasSpeakableCharacters; else "empty_input"), at most
// max_input_chars code points. Errors name `param`; over-long input is PayloadTooLarge (413).
absl::Status CheckInput(std::string_view text, const InputLimits& limits, std::string_view param);

}  // namespace voxserve::text
