#include "service/request_checks.h"

#include <cmath>
#include <string>

#include "audio/audio_format.h"
#include "core/error.h"
#include "text/utf8.h"

namespace voxserve::service {

absl::Status CheckRequestOptions(const SynthesisRequest& request, const ServiceConfig& config) {
  if (!std::isfinite(request.speed) || request.speed < 0.25 || request.speed > 4.0) {
    return core::InvalidArgument("speed must be between 0.25 and 4.0", "speed", "invalid_speed");
  }
  if (request.timeout &&
      (request.timeout->count() <= 0 || request.timeout->count() > config.max_timeout_ms)) {
    return core::InvalidArgument(
        "timeout must be between 1 and " + std::to_string(config.max_timeout_ms) + " ms",
        "timeout_ms", "invalid_timeout");
  }
  if (text::CountCodePoints(request.instructions) > kMaxInstructionsChars) {
    return core::PayloadTooLarge(
        "instructions may hold at most " + std::to_string(kMaxInstructionsChars) + " characters",
        "instructions");
  }
  if (request.sample_rate != 0) {
    // The rate checks do not depend on the voice's own rate (24 kHz here is any rate), so a
    // stream is refused before its first sentence rather than at it.
    constexpr int kAnyVoiceRate = 24000;
    auto rate = audio::ResolveOutputSampleRate(request.format, kAnyVoiceRate, request.sample_rate);
    if (!rate.ok()) return rate.status();
  }
  return absl::OkStatus();
}

}  // namespace voxserve::service
