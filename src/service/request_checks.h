// The checks every synthesis request gets, whatever its transport: the options a client may set
// (speed, timeout, instructions) against the service's limits. TtsService::Synthesize and
// SpeechSession::Create both call it, so REST, WebSocket and gRPC name the same field, code and
// range for the same mistake.
#pragma once

#include "absl/status/status.h"
#include "service/service_config.h"
#include "service/synthesis_request.h"

namespace voxserve::service {

// As REST (and OpenAI): nobody parks large strings in a request or a connection.
inline constexpr size_t kMaxInstructionsChars = 4096;

// OK, or InvalidArgument naming the field (invalid_speed: 0.25 .. 4.0; invalid_timeout: 1 ..
// config.max_timeout_ms), or PayloadTooLarge for instructions over kMaxInstructionsChars. The
// text is not looked at (text::CheckInput does that).
absl::Status CheckRequestOptions(const SynthesisRequest& request, const ServiceConfig& config);

}  // namespace voxserve::service
