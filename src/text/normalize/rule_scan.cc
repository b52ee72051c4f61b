#include "text/normalize/rule_scan.h"

namespace voxserve::text::normalize {

std::string NormalizeWithRules(std::string_view text, const NormalizationRules& rules) {
  std::string out;
  out.reserve(text.size() + text.size() / 2);
  size_t at = 0;
  while (at < text.size()) {
    const char c = text[at];
    if (at == 0 || !IsWordByte(text[at - 1])) {
      std::optional<Match> match = IsAsciiLetter(c) ? rules.AtWord(text, at)
                                   : IsDigit(c)     ? rules.AtNumber(text, at, out)
                                                    : rules.AtSymbol(text, at);
      if (!match && IsWordByte(c)) {
        size_t end = at;
        while (end < text.size() && IsWordByte(text[end])) ++end;
        match = Match{std::string(text.substr(at, end - at)), end};
      }
      if (match) {
        out += match->words;
        at = match->end;
        continue;
      }
    }
    out += c;
    ++at;
  }
  return out;
}

std::optional<uint64_t> ToNumber(std::string_view digits, size_t max_digits) {
  if (digits.empty() || digits.size() > max_digits) return std::nullopt;
  uint64_t value = 0;
  for (char digit : digits) value = value * 10 + static_cast<uint64_t>(digit - '0');
  return value;
}

}  // namespace voxserve::text::normalize
