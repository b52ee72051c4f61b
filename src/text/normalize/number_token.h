// A number as written in running text, shared by the English and Chinese rules: digits with
// optional thousands separators ("1,234,567") and an optional decimal part ("3.14").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace voxserve::text::normalize {

struct NumberToken {
  std::string integer;   // the integer part's digits, separators removed
  std::string fraction;  // the digits after the decimal point; empty: none
  bool grouped = false;  // written with thousands separators
  size_t end = 0;        // offset just past the number in the text
};

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The number starting at `at` (a digit). A comma counts only between groups of exactly three
// digits, and a point only when a digit follows it: "1,5" is 1 then ",5"; "3." ends at 3.
std::optional<NumberToken> ReadNumber(std::string_view text, size_t at);

// The run of digits starting at `at`, possibly empty.
std::string_view DigitRun(std::string_view text, size_t at);

}  // namespace voxserve::text::normalize
