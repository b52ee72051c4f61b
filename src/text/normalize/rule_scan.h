// The pass every language's normalization rules share (docs/text-normalization.md): left to
// right; at each word boundary (ASCII letters and digits make words, so a curly quote, a dash or
// a no-break space before a number is a boundary like a space) the language's rule for what
// starts there writes its words and moves past what it read. A word no rule reads (a number
// glued to letters, "mp3", "A4") is copied whole, so its digits are never read as a number;
// everything else is copied byte by byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "text/normalize/number_token.h"

namespace voxserve::text::normalize {

// What a rule read: its words, and the offset just past it in the text.
struct Match {
  std::string words;
  size_t end = 0;
};

// One language's rules, each asked at a word boundary. None: nothing of theirs starts there.
class NormalizationRules {
 public:
  virtual ~NormalizationRules() = default;
  // Before a letter ("Dr.", "St."); none: the word is copied whole.
  virtual std::optional<Match> AtWord(std::string_view text, size_t at) const = 0;
  // Before a digit; none: the number is glued to letters and copied as a word. `written` is what
  // the pass has written so far (Chinese reads 第2 as a rank).
  virtual std::optional<Match> AtNumber(std::string_view text, size_t at,
                                        std::string_view written) const = 0;
  // Before anything else: a sign, a currency symbol.
  virtual std::optional<Match> AtSymbol(std::string_view text, size_t at) const = 0;
};

std::string NormalizeWithRules(std::string_view text, const NormalizationRules& rules);

// Helpers the rules share.
inline bool IsWordByte(char c) { return IsDigit(c) || IsAsciiLetter(c); }
inline bool WordEndsAt(std::string_view text, size_t end) {
  return end >= text.size() || !IsWordByte(text[end]);
}
inline bool StartsWith(std::string_view text, size_t at, std::string_view prefix) {
  return text.substr(at, prefix.size()) == prefix;
}
// A symbol of one of `currencies` at `at` with a number right after it ("$3.50", "¥1,000"): the
// currency and the number. None when no symbol starts there or no digit follows it.
template <typename Currency, size_t N>
std::optional<std::pair<const Currency*, NumberToken>> AmountAt(std::string_view text, size_t at,
                                                                const Currency (&currencies)[N]) {
  for (const Currency& currency : currencies) {
    if (!StartsWith(text, at, currency.symbol)) continue;
    const size_t start = at + currency.symbol.size();
    if (start >= text.size() || !IsDigit(text[start])) return std::nullopt;
    auto number = ReadNumber(text, start);
    if (!number) return std::nullopt;
    return std::pair{&currency, *std::move(number)};
  }
  return std::nullopt;
}

// The value of 1 to `max_digits` digits (at most 19); none for more or none.
std::optional<uint64_t> ToNumber(std::string_view digits, size_t max_digits);

}  // namespace voxserve::text::normalize
