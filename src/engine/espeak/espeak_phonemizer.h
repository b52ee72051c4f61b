// Text → IPA with libespeak-ng, one clause at a time, the way Piper and Kokoro phonemize: each
// clause comes back with the punctuation that ended it, which espeak itself drops.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/espeak/espeak_library.h"

namespace voxserve::engine {

// What ended a clause. Sentence ends start a new sentence in Piper's grouping.
enum class ClauseEnd { kNone, kPeriod, kQuestion, kExclamation, kComma, kColon, kSemicolon };

bool EndsSentence(ClauseEnd end);
// The ASCII punctuation Piper re-inserts for a clause end ("." "?" "!" "," ":" ";"), or "".
std::string_view PunctuationFor(ClauseEnd end);

struct PhonemizedClause {
  std::string phonemes;  // IPA, UTF-8, as espeak-ng returns it (language flags like "(en)" kept)
  ClauseEnd end = ClauseEnd::kNone;
};

// The clause end a clause of `text` has when its text stops at byte `clause_end` (exclusive):
// the last character before it that is not white space or a closing quote/bracket, if it is
// clause punctuation (ASCII or CJK full-width). Exposed for tests.
ClauseEnd ClauseEndBefore(std::string_view text, size_t clause_end);

// Removes espeak's language-switch flags, e.g. "(en)" and "(cmn)" around a foreign word,
// keeping the word's phonemes (Piper's keepLanguageFlags = false).
std::string RemoveLanguageFlags(std::string_view phonemes);

// Safe cross thread: every call into libespeak-ng holds the library's process-wide lock, so
// calls from several engines are serialized (espeak is a fraction of a model's inference time).
class EspeakPhonemizer {
 public:
  // `data_path`: espeak-ng-data folder, empty = the library's default (see EspeakLibrary).
  static absl::StatusOr<std::unique_ptr<EspeakPhonemizer>> Create(const std::string& data_path);

  // OK when espeak-ng has a voice of that name or language (e.g. "en-us", "en-gb", "cmn"), as
  // `espeak-ng -v` accepts them.
  absl::Status CheckVoice(const std::string& voice) const;

  // The clauses of `text` (valid UTF-8) in order. Empty text gives none.
  absl::StatusOr<std::vector<PhonemizedClause>> Phonemize(std::string_view text,
                                                          const std::string& voice) const;

 private:
  explicit EspeakPhonemizer(EspeakLibrary* library) : library_(library) {}
  // Selects `voice`; call with the library lock held.
  absl::Status SelectVoice(const std::string& voice) const;

  EspeakLibrary* library_;
  // voice as given → what espeak_SetVoiceByName accepts; guarded by the library lock.
  mutable std::map<std::string, std::string> resolved_;
};

}  // namespace voxserve::engine
