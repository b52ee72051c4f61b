#include "service/ssml_plan.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "text/speakable_text.h"

namespace voxserve::service {
namespace {

using text::ssml::SpeechItem;

// The engine contract's speed range (engine::SegmentInput::speed).
constexpr double kMinSpeed = 0.25;
constexpr double kMaxSpeed = 4.0;

// The style of a text item (its phonemes and pause aside), or the reason it cannot be spoken.
absl::StatusOr<SegmentStyle> StyleOf(const SpeechItem& item, const SsmlPlanContext& context) {
  SegmentStyle style;
  style.speed = std::clamp(context.request_speed * item.rate, kMinSpeed, kMaxSpeed);
  if (context.controls_pitch) style.pitch = item.pitch;
  style.gain_db = item.volume_db;
  if (!item.voice.empty()) {
    auto voice = context.resolve_voice(item.voice);
    if (!voice.ok()) return voice.status();
    style.voice_id = *voice;
  }
  return style;
}

}  // namespace

absl::StatusOr<bool> IsSsmlRequest(const SynthesisRequest& request) {
  if (request.input_format.empty()) return text::ssml::LooksLikeSsml(request.text);
  if (request.input_format == "ssml") return true;
  if (request.input_format == "text") return false;
  return core::InvalidArgument(
      "input_format must be \"text\" or \"ssml\" (or left out: SSML when "
      "the text starts with <speak>)",
      "input_format", "invalid_input_format");
}

absl::StatusOr<PlannedSegments> PlanSsmlSegments(const std::vector<SpeechItem>& items,
                                                 const SsmlPlanContext& context) {
  PlannedSegments planned;
  // Text of one style not yet cut into segments.
  std::string run;
  SegmentStyle run_style;
  auto flush = [&] {
    if (run.empty()) return;
    for (std::string& segment : context.splitter->Split(run, context.max_segment_chars)) {
      if (!text::HasSpeakableCharacters(segment)) continue;
      planned.texts.push_back(std::move(segment));
      planned.styles.push_back(run_style);
    }
    run.clear();
  };
  for (const SpeechItem& item : items) {
    if (item.kind == SpeechItem::Kind::kBreak) {
      flush();
      if (item.break_seconds <= 0) continue;
      SegmentStyle pause;
      pause.silence_seconds = item.break_seconds;
      planned.texts.emplace_back();
      planned.styles.push_back(pause);
      continue;
    }
    auto style = StyleOf(item, context);
    if (!style.ok()) return style.status();
    if (!item.phonemes.empty()) {
      flush();
      if (!context.speaks_ipa) {
        return core::InvalidArgument("SSML <phoneme> is not supported by engine '" +
                                         context.engine +
                                         "' (IPA is spoken by piper and kokoro; docs/ssml.md)",
                                     context.field, "ssml_unsupported");
      }
      style->phonemes = item.phonemes;
      // The graphemes are the segment's text (for word timings); an empty <phoneme/> has none.
      planned.texts.push_back(item.text.empty() ? item.phonemes : item.text);
      planned.styles.push_back(*std::move(style));
      continue;
    }
    if (item.starts_sentence || !(*style == run_style)) flush();
    run_style = *std::move(style);
    // Markup that spelled the text out (<say-as>, <sub>) is spoken as it says.
    run += item.verbatim ? item.text : context.speech_text(item.text);
  }
  flush();
  return planned;
}

std::string StylesFingerprint(const std::vector<SegmentStyle>& styles) {
  if (std::all_of(styles.begin(), styles.end(),
                  [](const SegmentStyle& style) { return style == SegmentStyle{}; })) {
    return "";
  }
  std::string fingerprint = "ssml";
  for (const SegmentStyle& style : styles) {
    fingerprint += '\n' + style.voice_id + '\t' + std::to_string(style.speed) + '\t' +
                   std::to_string(style.pitch) + '\t' + std::to_string(style.gain_db) + '\t' +
                   style.phonemes + '\t' + std::to_string(style.silence_seconds);
  }
  return fingerprint;
}

void ApplyGain(std::vector<float>& samples, double gain_db) {
  if (gain_db == 0.0) return;
  const float gain =
      gain_db <= text::ssml::kSilentDb ? 0.0f : static_cast<float>(std::pow(10.0, gain_db / 20.0));
  for (float& sample : samples) sample = std::clamp(sample * gain, -1.0f, 1.0f);
}

}  // namespace voxserve::service
