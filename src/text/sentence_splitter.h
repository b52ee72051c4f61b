// Splits text into sentences with ICU's sentence rules (with the abbreviation suppressions of
// ICU's "ss=standard" locale keyword, plus Dr./St./Jr./Sr. for English), so a request can be
// synthesized and streamed sentence by sentence.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::text {

// Safe cross thread: Split() clones the ICU iterator it needs, the prototype is never mutated.
class SentenceSplitter {
 public:
  // `locale` is a BCP-47 or ICU id, e.g. "en", "zh"; an unknown one falls back to ICU's root rules.
  static absl::StatusOr<std::unique_ptr<SentenceSplitter>> Create(std::string_view locale = "en");
  ~SentenceSplitter();

  // Sentences in order, each trimmed of surrounding whitespace; whitespace-only input gives none.
  // Input must be valid UTF-8. A sentence longer than `max_chars` code points is cut further at
  // the last clause punctuation or space before the limit (0 = no limit).
  std::vector<std::string> Split(std::string_view utf8, std::size_t max_chars = 0) const;

  // ICU's sentences as views into `utf8`, untrimmed and uncut: together they cover it exactly.
  // For callers that need positions (TextAccumulator); Split() is the usual entry point.
  std::vector<std::string_view> Spans(std::string_view utf8) const;

 private:
  struct Impl;
  explicit SentenceSplitter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Byte length of the first piece of `sentence` (trimmed, non-empty, valid UTF-8) when a piece may
// hold at most `max_chars` (> 0) code points: after the last clause mark (, ; : 、 ， ...) within the
// limit, else before the last space, else right at the limit. The whole size when it fits.
std::size_t ClauseCutLength(std::string_view sentence, std::size_t max_chars);

}  // namespace voxserve::text
