// The checks every synthesis request gets, whatever its transport: the options a client may set
// (speed, timeout, instructions) against the service's limits. TtsService::Synthesize and
// SpeechSession::Create both call it, so REST, WebSocket and gRPC name the same field, code and
// range for the same mistake.
#pragma once

#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "service/service_config.h"
#include "service/synthesis_request.h"

namespace voxserve::service {

// As REST (and OpenAI): nobody parks large strings in a request or a connection.
inline constexpr size_t kMaxInstructionsChars = 4096;

// OK, or InvalidArgument naming the field (invalid_speed: 0.25 .. 4.0; invalid_timeout: 1 ..
// config.max_timeout_ms), or PayloadTooLarge for instructions over kMaxInstructionsChars. The
// text is not looked at (text::CheckInput does that).
absl::Status CheckRequestOptions(const SynthesisRequest& request, const ServiceConfig& config);

// SynthesisRequest::voice_mode by name ("zero_shot", "cross_lingual", "instruct"); "" = unset.
// Another name: InvalidArgument naming "voice_mode" (invalid_voice_mode) with the three names.
absl::StatusOr<std::optional<engine::VoiceMode>> ParseVoiceMode(std::string_view name);

// The mode a cloned voice is spoken in, once TtsService has found its profile: voice_mode when
// set, else "instruct" when the request has instructions, else "zero_shot" for a voice
// registered with a transcript and "cross_lingual" without one (upstream needs the prompt's
// transcript for zero-shot: frontend.py:168-189). InvalidArgument naming the field at fault
// for "zero_shot" without a transcript, "instruct" without instructions, and instructions with
// "zero_shot" or "cross_lingual" (upstream's modes cannot follow them: dropping them silently
// would hide the mistake).
absl::StatusOr<engine::VoiceMode> ResolveVoiceMode(const SynthesisRequest& request,
                                                   bool voice_has_transcript);

}  // namespace voxserve::service
