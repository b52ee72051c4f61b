// SSML in the service (docs/ssml.md): whether a request is SSML, and the segments the parsed
// document (text::ssml::SpeechItem, the one parser every engine shares) becomes. A pronunciation
// dictionary's IPA entries reach engines the same way: items with phonemes, segments of their own.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "service/synthesis_request.h"
#include "text/sentence_splitter.h"
#include "text/ssml/ssml_document.h"

namespace voxserve::service {

// How one segment is spoken beyond its text (JobPlan::styles). Default = as the request says.
struct SegmentStyle {
  std::string voice_id;        // another voice of the request's model; empty = the request's
  double speed = 1.0;          // the request's speed times SSML's rate, clamped to 0.25 .. 4
  double pitch = 1.0;          // only for engines with ModelInfo::controls_pitch
  double gain_db = 0.0;        // applied to the segment's PCM; text::ssml::kSilentDb mutes it
  std::string phonemes;        // IPA spoken instead of the text (engines with speaks_ipa)
  double silence_seconds = 0;  // > 0: a pause made by the service, no engine call; no text

  bool operator==(const SegmentStyle&) const = default;
};

// SynthesisRequest::input_format: "" detects (text::ssml::LooksLikeSsml: the text starts with
// "<speak"), "text" and "ssml" decide. Another value: InvalidArgument, "invalid_input_format".
absl::StatusOr<bool> IsSsmlRequest(const SynthesisRequest& request);

// What planning needs to know of the request and its model. The callbacks run during the call.
struct SsmlPlanContext {
  const text::SentenceSplitter* splitter = nullptr;
  size_t max_segment_chars = 0;
  double request_speed = 1.0;
  std::string field = "input";  // the request field holding the document, named in errors
  std::string engine;           // the model's engine, named in errors
  bool speaks_ipa = false;      // engine::ModelInfo's
  bool controls_pitch = false;
  // The voice id an SSML <voice name> names in the request's model, or the error to answer
  // (InvalidArgument, voice_not_found).
  std::function<absl::StatusOr<std::string>(const std::string& name)> resolve_voice;
  // The text an engine gets for text the markup did not already spell out (normalization).
  std::function<std::string(const std::string& text)> speech_text;
};

struct PlannedSegments {
  std::vector<std::string> texts;    // JobPlan::segments
  std::vector<SegmentStyle> styles;  // one per text
};

// Text items that share a style run together and are cut at sentence boundaries (the splitter's,
// and <s>/<p> edges); a change of voice or prosody starts a new segment, as does each <phoneme>
// (a segment of IPA) and each <break> (a silent segment). InvalidArgument, "ssml_unsupported",
// for a <phoneme> the engine cannot speak; resolve_voice's error for an unknown voice.
absl::StatusOr<PlannedSegments> PlanSsmlSegments(const std::vector<text::ssml::SpeechItem>& items,
                                                 const SsmlPlanContext& context);

// Every style, for the response cache's key (ResponseCacheKey::markup_version): the same text
// with other styles is other audio. Empty when every style is the default.
std::string StylesFingerprint(const std::vector<SegmentStyle>& styles);

// Multiplies `samples` by `gain_db` (kSilentDb: zeroes them), clipped to [-1, 1].
void ApplyGain(std::vector<float>& samples, double gain_db);

}  // namespace voxserve::service
