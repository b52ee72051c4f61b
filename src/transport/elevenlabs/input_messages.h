// The JSON messages of ElevenLabs' text-to-speech WebSockets, read and written; no socket here.
// References:
// https://elevenlabs.io/docs/api-reference/text-to-speech/v-1-text-to-speech-voice-id-stream-input
// and
// https://elevenlabs.io/docs/api-reference/text-to-speech/v-1-text-to-speech-voice-id-multi-stream-input;
// what LiveKit's plugin sends: @livekit/agents-plugin-elevenlabs 1.9.0 dist/tts.js (sendLoop).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "service/alignment_estimate.h"
#include "service/synthesis_request.h"

namespace voxserve::transport::elevenlabs {

// One client message. Honoured: text, flush, context_id, close_context, close_socket,
// voice_settings.speed and pronunciation_dictionary_locators (of the message that begins a
// stream or context). Accepted and ignored (type-checked where voxserve reads them):
// try_trigger_generation, generation_config (chunk_length_schedule: voxserve speaks whole
// sentences), the rest of voice_settings.
struct InputMessage {
  std::optional<std::string> text;  // "" ends the stream (stream-input) / keeps alive (multi)
  bool flush = false;
  std::optional<double> speed;  // voice_settings.speed
  std::vector<service::DictionaryLocator> dictionaries;  // pronunciation_dictionary_locators
  std::optional<std::string> context_id;
  bool close_context = false;
  bool close_socket = false;
  // The first message's credentials: `xi_api_key` (the docs; the SDK's serializer writes
  // `xi-api-key`) or `authorization` ("Bearer <key>"). Read when the upgrade had no valid key.
  std::optional<std::string> api_key;
  std::optional<std::string> authorization;
};

// InvalidArgument naming the field for anything that is not such an object.
absl::StatusOr<InputMessage> ParseInputMessage(std::string_view json);

// {"audio": base64, "isFinal": false, "alignment": A, "normalizedAlignment": A[, "contextId"]}
// with A = {"chars", "charStartTimesMs", "charDurationsMs"} (integers, ms, in the context's
// audio time). voxserve speaks the text as written, so both alignments are the same.
std::string AudioMessage(std::string_view audio, const service::CharacterAlignment& alignment,
                         const std::optional<std::string>& context_id);
// {"isFinal": true[, "contextId"]}: nothing more comes for the stream or context.
std::string FinalMessage(const std::optional<std::string>& context_id);
// {"message", "error" (ErrorCode: REST's code), "code" (the close code)[, "contextId"]}: LiveKit's
// plugin looks for `error`.
std::string ErrorMessage(const absl::Status& status, int close_code,
                         const std::optional<std::string>& context_id);

}  // namespace voxserve::transport::elevenlabs
