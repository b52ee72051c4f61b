#include "text/normalize/number_token.h"

namespace voxserve::text::normalize {

std::string_view DigitRun(std::string_view text, size_t at) {
  size_t end = at;
  while (end < text.size() && IsDigit(text[end])) ++end;
  return text.substr(at, end - at);
}

std::optional<NumberToken> ReadNumber(std::string_view text, size_t at) {
  std::string_view first = DigitRun(text, at);
  if (first.empty()) return std::nullopt;
  NumberToken token;
  token.integer = std::string(first);
  size_t end = at + first.size();
  // Thousands separators: 1-3 digits first, then ",ddd" groups not followed by another digit.
  if (first.size() <= 3) {
    size_t probe = end;
    std::string grouped = token.integer;
    while (probe < text.size() && text[probe] == ',') {
      std::string_view group = DigitRun(text, probe + 1);
      if (group.size() != 3) break;
      grouped += group;
      probe += 4;
    }
    if (probe != end) {
      token.integer = std::move(grouped);
      token.grouped = true;
      end = probe;
    }
  }
  if (end + 1 < text.size() && text[end] == '.' && IsDigit(text[end + 1])) {
    std::string_view fraction = DigitRun(text, end + 1);
    token.fraction = std::string(fraction);
    end += 1 + fraction.size();
  }
  token.end = end;
  return token;
}

}  // namespace voxserve::text::normalize
