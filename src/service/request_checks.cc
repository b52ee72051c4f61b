#include "service/request_checks.h"

#include <cmath>
#include <string>

#include "audio/audio_format.h"
#include "core/error.h"
#include "service/ssml_plan.h"
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
  if (auto mode = ParseVoiceMode(request.voice_mode); !mode.ok()) return mode.status();
  if (auto ssml = IsSsmlRequest(request); !ssml.ok()) return ssml.status();
  if (request.sample_rate != 0) {
    // The rate checks do not depend on the voice's own rate (24 kHz here is any rate), so a
    // stream is refused before its first sentence rather than at it.
    constexpr int kAnyVoiceRate = 24000;
    auto rate = audio::ResolveOutputSampleRate(request.format, kAnyVoiceRate, request.sample_rate);
    if (!rate.ok()) return rate.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<engine::VoiceMode>> ParseVoiceMode(std::string_view name) {
  if (name.empty()) return std::nullopt;
  if (name == "zero_shot") return engine::VoiceMode::kZeroShot;
  if (name == "cross_lingual") return engine::VoiceMode::kCrossLingual;
  if (name == "instruct") return engine::VoiceMode::kInstruct;
  return core::InvalidArgument(
      "voice_mode must be \"zero_shot\", \"cross_lingual\" or \"instruct\"", "voice_mode",
      "invalid_voice_mode");
}

absl::StatusOr<engine::VoiceMode> ResolveVoiceMode(const SynthesisRequest& request,
                                                   bool voice_has_transcript) {
  auto asked = ParseVoiceMode(request.voice_mode);
  if (!asked.ok()) return asked.status();
  const bool instructed = !request.instructions.empty();
  if (!*asked) {
    if (instructed) return engine::VoiceMode::kInstruct;
    return voice_has_transcript ? engine::VoiceMode::kZeroShot : engine::VoiceMode::kCrossLingual;
  }
  switch (**asked) {
    case engine::VoiceMode::kInstruct:
      if (!instructed) {
        return core::InvalidArgument("voice_mode \"instruct\" needs instructions", "instructions",
                                     "missing_instructions");
      }
      break;
    case engine::VoiceMode::kZeroShot:
      if (!voice_has_transcript) {
        return core::InvalidArgument(
            "voice_mode \"zero_shot\" needs the voice's transcript, and this voice was "
            "registered without one: use \"cross_lingual\" or register it with its transcript",
            "voice_mode", "invalid_voice_mode");
      }
      [[fallthrough]];
    case engine::VoiceMode::kCrossLingual:
      if (instructed) {
        return core::InvalidArgument("voice_mode \"" + request.voice_mode +
                                         "\" does not follow instructions: drop them, or use "
                                         "voice_mode \"instruct\"",
                                     "voice_mode", "invalid_voice_mode");
      }
      break;
  }
  return **asked;
}

}  // namespace voxserve::service
