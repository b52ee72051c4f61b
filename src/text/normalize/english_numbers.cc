#include "text/normalize/english_numbers.h"

#include <array>

namespace voxserve::text::normalize {
namespace {

constexpr std::array<std::string_view, 20> kOnes = {
    "zero",     "one",     "two",     "three",     "four",     "five",    "six",
    "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
constexpr std::array<std::string_view, 10> kTens = {
    "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
constexpr std::array<std::string_view, 5> kScales = {"", "thousand", "million", "billion",
                                                     "trillion"};

std::string BelowThousand(unsigned value) {
  std::string out;
  if (value >= 100) {
    out = std::string(kOnes[value / 100]) + " hundred";
    value %= 100;
    if (value == 0) return out;
    out += ' ';
  }
  if (value < 20) return out + std::string(kOnes[value]);
  out += kTens[value / 10];
  if (value % 10 != 0) out += "-" + std::string(kOnes[value % 10]);
  return out;
}

}  // namespace

std::string EnglishCardinal(uint64_t value) {
  if (value == 0) return "zero";
  std::string out;
  uint64_t scale = 1'000'000'000'000ull;
  for (int index = 4; index >= 0; --index, scale /= 1000) {
    const unsigned group = static_cast<unsigned>((value / scale) % 1000);
    if (group == 0) continue;
    if (!out.empty()) out += ' ';
    out += BelowThousand(group);
    if (index > 0) out += " " + std::string(kScales[index]);
  }
  return out;
}

std::string EnglishOrdinalOfWords(std::string words) {
  const size_t start =
      words.find_last_of(" -") == std::string::npos ? 0 : words.find_last_of(" -") + 1;
  const std::string last = words.substr(start);
  words.resize(start);
  static constexpr std::pair<std::string_view, std::string_view> kIrregular[] = {
      {"one", "first"},    {"two", "second"}, {"three", "third"},   {"five", "fifth"},
      {"eight", "eighth"}, {"nine", "ninth"}, {"twelve", "twelfth"}};
  for (const auto& [cardinal, ordinal] : kIrregular) {
    if (last == cardinal) return words + std::string(ordinal);
  }
  if (!last.empty() && last.back() == 'y') return words + last.substr(0, last.size() - 1) + "ieth";
  return words + last + "th";
}

std::string EnglishOrdinal(uint64_t value) { return EnglishOrdinalOfWords(EnglishCardinal(value)); }

std::string EnglishYear(uint64_t value) {
  if (value < 1000 || value > 2999 || value == 1000 || (value >= 2000 && value <= 2009)) {
    return EnglishCardinal(value);
  }
  const unsigned high = static_cast<unsigned>(value / 100);
  const unsigned low = static_cast<unsigned>(value % 100);
  std::string out = BelowThousand(high);
  if (low == 0) return out + " hundred";
  if (low < 10) return out + " oh " + std::string(kOnes[low]);
  return out + " " + BelowThousand(low);
}

std::string EnglishDigits(std::string_view digits) {
  std::string out;
  for (char digit : digits) {
    if (!out.empty()) out += ' ';
    out += kOnes[static_cast<unsigned>(digit - '0')];
  }
  return out;
}

}  // namespace voxserve::text::normalize
