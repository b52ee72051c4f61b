// The SSML subset voxserve speaks (docs/ssml.md), parsed once for every engine into a plain,
// transport-neutral list of what to say and how. Parsing uses Debian's expat with every DTD
// refused, so no entity can be declared (no "billion laughs", no external entity), and bounded
// nesting; the input itself is bounded by the service's limits.max_input_chars beforehand.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::text::ssml {

// One thing to do, in document order.
struct SpeechItem {
  enum class Kind {
    kText,   // speak `text` (say-as and sub already expanded), or `phonemes` when set
    kBreak,  // `break_seconds` of silence
  };
  Kind kind = Kind::kText;
  std::string text;      // kText: UTF-8, whitespace collapsed; the graphemes of a <phoneme>
  std::string phonemes;  // kText from <phoneme alphabet="ipa" ph="...">: IPA for `text`
  double break_seconds = 0;
  // From enclosing <prosody> and <emphasis>, multiplied when nested: relative to the request's.
  double rate = 1.0;       // speaking rate factor (2 = twice as fast)
  double pitch = 1.0;      // base pitch factor (engines that control pitch; others ignore it)
  double volume_db = 0.0;  // gain in dB; kSilentDb for volume="silent"
  std::string voice;       // from an enclosing <voice name="...">; empty = the request's voice
  // True when a <s> or <p> boundary (or a voice/prosody change) separates this item from the
  // previous text: the service starts a new segment here.
  bool starts_sentence = false;
  // The text came from <say-as> or <sub>: the markup decided how it is read, so pronunciation
  // dictionaries leave it alone.
  bool verbatim = false;
};

inline constexpr double kSilentDb = -1000.0;

struct ParseOptions {
  // Nesting deeper than this is refused: no document a person writes comes near it, and the
  // parser's state grows with it.
  int max_depth = 32;
  // The longest break one element may ask for. Longer is an error rather than a clamp: a
  // client asking for a minute of silence has most likely made a unit mistake.
  double max_break_seconds = 10.0;
  // The request field holding the document, named in errors.
  std::string field = "input";
  // The voice's language (primary subtag, "en"), for <say-as> until an xml:lang says otherwise.
  std::string language = "en";
};

// True when `text` is meant as SSML by the auto-detection rule: it starts, after whitespace,
// with "<speak" followed by '>', '/', or whitespace.
bool LooksLikeSsml(std::string_view text);

// The same rule for a stream's first pieces, which may end anywhere ("<spe", then "ak>..."):
// kUndecided while `start` could still become "<speak" or an XML declaration before it (only
// spaces yet, "<", "<spe", "<speak", "<?xml versi"), up to kMaxUndecidedStreamBytes; past that
// bound the rule decides on what there is.
enum class StreamStart { kSsml, kText, kUndecided };
inline constexpr size_t kMaxUndecidedStreamBytes = 256;
StreamStart ClassifyStreamStart(std::string_view start);

// Parses `document` (a <speak> document, or one with an XML declaration whose root must then be
// <speak>; anything else is wrapped in <speak>...</speak>, as ElevenLabs takes bare <break/>
// tags in text). Errors are InvalidArgument, code "invalid_ssml",
// naming `options.field` and the line and column (1-based, of the original text) where the
// document goes wrong. Unknown elements are ignored and their text is spoken (SSML 1.1, 2.1);
// <metadata>, <desc> and <lexicon> contents are not spoken.
absl::StatusOr<std::vector<SpeechItem>> ParseSsml(std::string_view document,
                                                  const ParseOptions& options = {});

}  // namespace voxserve::text::ssml
