// English number words (American usage: no "and", hyphens from twenty-one to ninety-nine).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace voxserve::text::normalize {

// 0 .. 999,999,999,999,999 ("one quadrillion" and above are read digit by digit by callers).
std::string EnglishCardinal(uint64_t value);
// "first", "twenty-second", "one hundredth".
std::string EnglishOrdinal(uint64_t value);
// Years as they are said: 1999 "nineteen ninety-nine", 1905 "nineteen oh five", 1900 "nineteen
// hundred", 2000 "two thousand", 2007 "two thousand seven", 2026 "twenty twenty-six"; outside
// 1000..2999 (and for 1000, 2000..2009) the cardinal.
std::string EnglishYear(uint64_t value);
// Each digit's name: "0 7" → "zero seven".
std::string EnglishDigits(std::string_view digits);
// The ordinal of a cardinal's words: "twenty-one" → "twenty-first".
std::string EnglishOrdinalOfWords(std::string words);

// The largest value EnglishCardinal spells.
inline constexpr uint64_t kMaxEnglishCardinal = 999'999'999'999'999ull;

}  // namespace voxserve::text::normalize
