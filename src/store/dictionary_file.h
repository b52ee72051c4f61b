// The file of one pronunciation dictionary (store/dictionary_store.h): JSON, named
// `<id>.json`, holding its metadata and every kept version's lexicon, losslessly:
//   {"format": 1, "id": "pd_…", "name": "…", "description": "…", "created_at": 1700000000,
//    "archived_at": null, "versions": [{"version_id": "pdv_…", "created_at": 1700000000,
//    "language": "en", "lexemes": [{"graphemes": ["SQL"], "alias": "sequel", "ipa": "",
//    "case_sensitive": true, "word_boundaries": true}]}]}
// Versions are oldest first. JSON rather than a binary layout: dictionaries are small, and an
// operator can read (and diff) them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "store/dictionary_backend.h"
#include "text/lexicon/lexicon.h"

namespace voxserve::store {

inline constexpr std::string_view kDictionaryIdPrefix = "pd_";
inline constexpr std::string_view kDictionaryVersionIdPrefix = "pdv_";
inline constexpr size_t kDictionaryIdHexDigits = 20;  // 80 random bits, as ElevenLabs' ids

// `prefix` followed by kDictionaryIdHexDigits lower-case hex digits.
bool HasDictionaryIdShape(std::string_view id, std::string_view prefix);

// What one file holds.
struct DictionaryRecord {
  std::string id;
  std::string name;
  std::string description;
  int64_t created_at = 0;
  std::optional<int64_t> archived_at;
  std::vector<DictionaryVersion> versions;  // oldest first; never empty

  bool operator==(const DictionaryRecord&) const;  // compares lexicons by value
};

// InvalidArgument, code "invalid_dictionary", unless every lexeme has 1 or more graphemes, each
// 1..limits.max_grapheme_chars bytes, an alias or an IPA string (each at most that long), and
// the lexicon has at most limits.max_rules lexemes; all of it valid UTF-8.
absl::Status ValidateStoredLexicon(const text::lexicon::Lexicon& lexicon,
                                   const text::lexicon::LexiconLimits& limits);

// `record` as the file's bytes (format 1: every version's lexicon inline; the postgres backend's
// row body). Its strings must be valid UTF-8 (the store checks them first).
std::string EncodeDictionaryFile(const DictionaryRecord& record);

// Format 2, the dir store's own (store/dictionary_store.h), where a change costs what it
// changes: `<id>.json` holds the metadata and each version's id, time and file size,
//   {"format": 2, "id": …, "name": …, "description": …, "created_at": …, "archived_at": …,
//    "versions": [{"version_id": "pdv_…", "created_at": …, "bytes": 1234}]}
// and each version's lexicon is a file of its own, written once: EncodeLexiconFile's
//   {"language": "en", "lexemes": [...]}.
std::string EncodeDictionaryMetadata(const DictionaryRecord& record);
// The record of a format 2 metadata file: its versions' lexicons are null. Errors as
// DecodeDictionaryFile.
absl::StatusOr<DictionaryRecord> DecodeDictionaryMetadata(std::string_view bytes);
std::string EncodeLexiconFile(const text::lexicon::Lexicon& lexicon);
absl::StatusOr<text::lexicon::Lexicon> DecodeLexiconFile(
    std::string_view bytes, const text::lexicon::LexiconLimits& limits);
// The "format" a dictionary file says it is in (1 or 2), or InvalidArgument when it is not a
// JSON object with one.
absl::StatusOr<int> DictionaryFileFormat(std::string_view bytes);

// The record a file holds, or InvalidArgument saying what is wrong: not JSON, another format,
// a missing or mistyped field, ids of the wrong shape, no versions or a repeated version id,
// a lexicon outside `limits` (ValidateStoredLexicon). Names are the store's to check.
absl::StatusOr<DictionaryRecord> DecodeDictionaryFile(std::string_view bytes,
                                                      const text::lexicon::LexiconLimits& limits);

}  // namespace voxserve::store
