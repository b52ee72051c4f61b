// Pronunciation dictionaries (docs/pronunciation-dictionaries.md): W3C PLS 1.0 files, a simple
// JSON of grapheme → alias or IPA, and ElevenLabs' rule objects, parsed into one form, and
// applied to the items a request speaks (ssml::SpeechItem: SSML's, or one item of plain text)
// before they become segments (and before text normalization, which they override).
//
// Matching rules: by default a grapheme matches case-sensitively (as PLS and ElevenLabs do) and
// only whole words (the characters around it are not letters, digits or '_'), except where it
// begins or ends with a CJK character (those scripts put no spaces between words); a lexeme may
// turn either off (ElevenLabs' case_sensitive / word_boundaries: case-insensitive is Unicode
// simple case folding). At each place the longest grapheme wins, and of equal ones the first
// dictionary's. Text from SSML <say-as>, <sub> and <phoneme> is left alone: the markup said how
// to read it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "text/ssml/ssml_document.h"

namespace voxserve::text::lexicon {

struct Lexeme {
  std::vector<std::string> graphemes;  // each non-empty
  std::string alias;                   // spoken instead of the grapheme, or
  std::string ipa;                     // its IPA, for engines that speak it (else the alias, if
                                       // any, else the grapheme as written)
  bool case_sensitive = true;
  bool word_boundaries = true;  // false: matches inside words too

  bool operator==(const Lexeme&) const = default;
};

struct Lexicon {
  std::string language;  // PLS xml:lang / JSON "language"; informational
  std::vector<Lexeme> lexemes;

  bool operator==(const Lexicon&) const = default;
};

struct LexiconLimits {
  size_t max_rules = 10'000;        // graphemes (one rule each), all lexemes together;
                                    // a large PLS has a few thousand
  size_t max_grapheme_chars = 200;  // bytes, per grapheme / alias / phoneme
  int max_depth = 16;               // PLS element nesting
};

// Its rules as ElevenLabs counts them: one per grapheme.
size_t RuleCount(const Lexicon& lexicon);

// Every grapheme, alias and phoneme read below must also pass text::UnspeakableTextProblem (no
// control characters, something visible): InvalidArgument "invalid_dictionary" otherwise.
//
// W3C PLS 1.0 (<lexicon alphabet="ipa"> of <lexeme> with <grapheme>, <phoneme>, <alias>). As
// for SSML, any DTD is refused (no entities). InvalidArgument, code "invalid_dictionary", with
// the line and column; another alphabet than IPA is refused too.
absl::StatusOr<Lexicon> ParsePls(std::string_view xml, const LexiconLimits& limits = {});
// {"language": "en", "entries": {"WWW": "World Wide Web", "tomato": {"ipa": "təˈmɑːtoʊ"},
// "SQL": {"alias": "sequel"}}}; a bare object of entries is taken too.
absl::StatusOr<Lexicon> ParseJsonLexicon(std::string_view json, const LexiconLimits& limits = {});
// JSON when the first non-space byte is '{', else PLS.
absl::StatusOr<Lexicon> ParseLexicon(std::string_view bytes, const LexiconLimits& limits = {});

// ElevenLabs' rules (api-reference/pronunciation-dictionary/add-rules): a JSON array of
// {"type": "alias", "string_to_replace", "alias"} or {"type": "phoneme", "string_to_replace",
// "phoneme", "alphabet": "ipa"}, each with optional "case_sensitive" and "word_boundaries"
// (default true); voxserve also reads "alias" beside a phoneme (spoken by engines without IPA).
// One lexeme per rule. InvalidArgument, code "invalid_dictionary", naming `field`[index]; the
// "cmu-arpabet" alphabet is refused (only IPA is spoken).
absl::StatusOr<std::vector<Lexeme>> ParseRules(std::string_view rules_json,
                                               const LexiconLimits& limits = {},
                                               std::string_view field = "rules");
// The rules of `lexicon` in that form (one per grapheme), as a JSON array.
std::string RulesJson(const Lexicon& lexicon);
// `lexicon` as a W3C PLS 1.0 document (alphabet ipa); ParsePls reads it back to the same
// lexemes except the two matching flags, which PLS cannot say.
std::string WritePls(const Lexicon& lexicon);

// `items` with every match replaced (see the rules above): an alias becomes text, an IPA entry
// a phoneme item of its own when `speaks_ipa`. Lexicons in order of precedence; none may be
// null.
std::vector<ssml::SpeechItem> Apply(const std::vector<ssml::SpeechItem>& items,
                                    std::span<const Lexicon* const> lexicons, bool speaks_ipa);

}  // namespace voxserve::text::lexicon
