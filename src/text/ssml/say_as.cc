#include "text/ssml/say_as.h"

#include <array>
#include <cctype>
#include <optional>
#include <vector>

namespace voxserve::text::ssml {
namespace {

constexpr std::array<const char*, 20> kOnes = {
    "zero",     "one",     "two",     "three",     "four",     "five",    "six",
    "seven",    "eight",   "nine",    "ten",       "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
constexpr std::array<const char*, 10> kTens = {"",      "",      "twenty",  "thirty", "forty",
                                               "fifty", "sixty", "seventy", "eighty", "ninety"};
constexpr std::array<const char*, 12> kMonths = {"January",   "February", "March",    "April",
                                                 "May",       "June",     "July",     "August",
                                                 "September", "October",  "November", "December"};
constexpr uint64_t kMaxNumber = 999'999'999'999'999;
constexpr size_t kMaxNumberDigits = 15;

// Bytes of the UTF-8 sequence a lead byte starts (the text is valid UTF-8: checked before).
size_t SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

std::optional<uint64_t> ParseUnsigned(std::string_view digits) {
  if (!IsAllDigits(digits) || digits.size() > kMaxNumberDigits) return std::nullopt;
  uint64_t value = 0;
  for (char c : digits) value = value * 10 + static_cast<uint64_t>(c - '0');
  return value;
}

std::string BelowThousand(unsigned value) {
  std::string words;
  if (value >= 100) {
    words = std::string(kOnes[value / 100]) + " hundred";
    value %= 100;
    if (value == 0) return words;
    words += " ";
  }
  if (value < 20) return words + kOnes[value];
  words += kTens[value / 10];
  if (value % 10 != 0) words += std::string("-") + kOnes[value % 10];
  return words;
}

std::string DigitWords(std::string_view digits, bool english) {
  std::string out;
  for (char c : digits) {
    if (!IsDigit(c)) continue;
    if (!out.empty()) out += ' ';
    if (english) {
      out += kOnes[static_cast<size_t>(c - '0')];
    } else {
      out += c;
    }
  }
  return out;
}

// "1,234,567" and "1234567" alike (a comma before every three digits, or none); nullopt for
// anything else ("1,2,3" is a list, not a number).
std::optional<uint64_t> ParseGroupedNumber(std::string_view text) {
  std::string digits;
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsDigit(text[i])) {
      digits += text[i];
    } else if (text[i] == ',' && i > 0 && i + 3 < text.size() &&
               IsAllDigits(text.substr(i + 1, 3)) && (i + 4 == text.size() || text[i + 4] == ',')) {
      continue;
    } else {
      return std::nullopt;
    }
  }
  return ParseUnsigned(digits);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Cardinal(std::string_view content, bool english) {
  std::string_view text = Trim(content);
  if (!english) return std::string(text);
  std::string prefix;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    prefix = text.front() == '-' ? "minus " : "plus ";
    text.remove_prefix(1);
  }
  std::string_view whole = text, fraction;
  if (size_t point = text.find('.'); point != std::string_view::npos) {
    whole = text.substr(0, point);
    fraction = text.substr(point + 1);
    if (!IsAllDigits(fraction)) return std::string(content);
  }
  std::optional<uint64_t> value =
      whole.empty() ? std::optional<uint64_t>(0) : ParseGroupedNumber(whole);
  if (!value) {
    // Too long to read as a number, or not one: digits are still read one by one.
    return IsAllDigits(whole) ? prefix + DigitWords(whole, true) : std::string(content);
  }
  std::string words = prefix + EnglishCardinal(*value);
  if (!fraction.empty()) words += " point " + DigitWords(fraction, true);
  return words;
}

std::string Ordinal(std::string_view content, bool english) {
  std::string_view text = Trim(content);
  if (!english) return std::string(text);
  // "21st", "2nd", "3rd", "4th": the suffix is what an ordinal is written with.
  for (std::string_view suffix : {"st", "nd", "rd", "th", "ST", "ND", "RD", "TH"}) {
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      text.remove_suffix(suffix.size());
      break;
    }
  }
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);  // "3." (German style)
  std::optional<uint64_t> value = ParseGroupedNumber(text);
  if (!value) return std::string(content);
  return EnglishOrdinal(*value);
}

std::string Characters(std::string_view content, bool english) {
  std::string out;
  size_t pos = 0;
  while (pos < content.size()) {
    size_t len = SequenceLength(static_cast<unsigned char>(content[pos]));
    if (pos + len > content.size()) len = 1;
    std::string_view ch = content.substr(pos, len);
    pos += len;
    if (ch.size() == 1 && std::isspace(static_cast<unsigned char>(ch[0]))) continue;
    if (!out.empty()) out += ' ';
    if (english && ch.size() == 1 && IsDigit(ch[0])) {
      out += kOnes[static_cast<size_t>(ch[0] - '0')];
    } else {
      out += ch;
    }
  }
  return out;
}

// A year as people say it: 1999 "nineteen ninety-nine", 2000 "two thousand", 2005 "two
// thousand five", 2026 "twenty twenty-six", 1905 "nineteen oh five", 1900 "nineteen hundred".
std::string Year(unsigned year) {
  if (year < 1000 || year >= 10000 || (year >= 2000 && year < 2010)) return EnglishCardinal(year);
  const unsigned high = year / 100, low = year % 100;
  if (low == 0) return BelowThousand(high) + " hundred";
  if (low < 10) return BelowThousand(high) + " oh " + kOnes[low];
  return BelowThousand(high) + " " + BelowThousand(low);
}

std::vector<std::string_view> SplitFields(std::string_view text) {
  std::vector<std::string_view> fields;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '-' || text[i] == '/' || text[i] == '.' || text[i] == ' ') {
      if (i > start) fields.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return fields;
}

std::string Date(std::string_view content, std::string format, bool english) {
  std::string_view text = Trim(content);
  if (!english) return std::string(text);
  std::vector<std::string_view> fields = SplitFields(text);
  if (format.empty()) {
    // ISO 8601 (2026-12-02) is unambiguous; otherwise the US order, SSML's first example.
    format = fields.size() == 3 && fields[0].size() == 4 ? "ymd" : "mdy";
    if (fields.size() == 2) format = fields[0].size() == 4 ? "ym" : "md";
    if (fields.size() == 1) format = "y";
  }
  if (fields.size() != format.size()) return std::string(content);
  std::optional<unsigned> year, month, day;
  for (size_t i = 0; i < fields.size(); ++i) {
    std::optional<uint64_t> value = ParseUnsigned(fields[i]);
    if (!value || *value > 9999) return std::string(content);
    switch (format[i]) {
      case 'y':
        year = static_cast<unsigned>(*value);
        break;
      case 'm':
        month = static_cast<unsigned>(*value);
        break;
      case 'd':
        day = static_cast<unsigned>(*value);
        break;
      default:
        return std::string(content);
    }
  }
  if ((month && (*month < 1 || *month > 12)) || (day && (*day < 1 || *day > 31))) {
    return std::string(content);
  }
  std::string out;
  if (month) out = kMonths[*month - 1];
  if (day) out += (out.empty() ? "the " : " ") + EnglishOrdinal(*day);
  if (day && !month) out += " of the month";
  if (year) out += (out.empty() ? "" : (day ? ", " : " ")) + Year(*year);
  return out;
}

std::string Time(std::string_view content, const std::string& format, bool english) {
  std::string_view text = Trim(content);
  if (!english) return std::string(text);
  // Hours[:minutes[:seconds]] and an optional am/pm, with or without a space or dots.
  std::string suffix;
  std::string lowered;
  for (char c : text) lowered += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view marker : {"a.m.", "p.m.", "am", "pm", "a", "p"}) {
    if (lowered.size() > marker.size() && std::string_view(lowered).ends_with(marker)) {
      suffix = marker[0] == 'a' ? "AM" : "PM";
      text = Trim(text.substr(0, text.size() - marker.size()));
      break;
    }
  }
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ':' || text[i] == '.') {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (parts.empty() || parts.size() > 3) return std::string(content);
  unsigned values[3] = {0, 0, 0};
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty() || parts[i].size() > 2 || !IsAllDigits(parts[i])) {
      return std::string(content);
    }
    values[i] = static_cast<unsigned>(*ParseUnsigned(parts[i]));
  }
  unsigned hour = values[0];
  const unsigned minute = values[1], second = values[2];
  if (hour > 24 || minute > 59 || second > 59 || (!suffix.empty() && (hour == 0 || hour > 12))) {
    return std::string(content);
  }
  if (format == "hms12" && suffix.empty() && hour <= 24) {
    suffix = hour >= 12 && hour < 24 ? "PM" : "AM";
    hour = hour % 12 == 0 ? 12 : hour % 12;
  }
  std::string out = EnglishCardinal(hour);
  if (minute == 0 && second == 0) {
    out += suffix.empty() ? (hour > 12 || hour == 0 ? " hundred" : " o'clock") : "";
  } else if (minute < 10) {
    out += std::string(" oh ") + kOnes[minute];
  } else {
    out += " " + EnglishCardinal(minute);
  }
  if (!suffix.empty()) out += " " + suffix;
  if (second != 0)
    out += " and " + EnglishCardinal(second) + (second == 1 ? " second" : " seconds");
  return out;
}

// Digit by digit, groups (separated by spaces, dashes, dots, parentheses) apart with a comma so
// that engines pause between them, as people read numbers out.
std::string Telephone(std::string_view content, bool english) {
  std::string out;
  std::string group;
  auto flush = [&] {
    if (group.empty()) return;
    if (!out.empty()) out += ", ";
    out += group;
    group.clear();
  };
  std::string_view text = Trim(content);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (IsDigit(c)) {
      if (!group.empty()) group += ' ';
      group += english ? kOnes[static_cast<size_t>(c - '0')] : std::string(1, c);
    } else if (c == '+') {
      flush();
      group = english ? "plus" : "+";
    } else if ((c == 'x' || c == 'X') && english) {
      flush();
      group = "extension";
    } else if (c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '/') {
      flush();
    } else {
      return std::string(content);  // not a telephone number: as it is
    }
  }
  flush();
  return out.empty() ? std::string(content) : out;
}

}  // namespace

std::string EnglishCardinal(uint64_t value) {
  if (value > kMaxNumber) return DigitWords(std::to_string(value), true);
  if (value == 0) return "zero";
  static constexpr std::array<std::pair<uint64_t, const char*>, 4> kScales = {{
      {1'000'000'000'000, "trillion"},
      {1'000'000'000, "billion"},
      {1'000'000, "million"},
      {1'000, "thousand"},
  }};
  std::string words;
  for (const auto& [scale, name] : kScales) {
    if (value >= scale) {
      if (!words.empty()) words += ' ';
      words += BelowThousand(static_cast<unsigned>(value / scale)) + " " + name;
      value %= scale;
    }
  }
  if (value > 0) {
    if (!words.empty()) words += ' ';
    words += BelowThousand(static_cast<unsigned>(value));
  }
  return words;
}

std::string EnglishOrdinal(uint64_t value) {
  std::string words = EnglishCardinal(value);
  // The last word changes: one → first, twelve → twelfth, twenty → twentieth, six → sixth.
  static constexpr std::array<std::pair<const char*, const char*>, 8> kIrregular = {{
      {"one", "first"},
      {"two", "second"},
      {"three", "third"},
      {"five", "fifth"},
      {"eight", "eighth"},
      {"nine", "ninth"},
      {"twelve", "twelfth"},
      {"zero", "zeroth"},
  }};
  size_t last = words.find_last_of(" -");
  last = last == std::string::npos ? 0 : last + 1;
  const std::string tail = words.substr(last);
  words.resize(last);
  for (const auto& [cardinal, ordinal] : kIrregular) {
    if (tail == cardinal) return words + ordinal;
  }
  if (tail.back() == 'y') return words + tail.substr(0, tail.size() - 1) + "ieth";
  return words + tail + "th";
}

std::string ExpandSayAs(const SayAs& say_as, std::string_view content) {
  const bool english = say_as.language.empty() || say_as.language == "en";
  const std::string& kind = say_as.interpret_as;
  if (kind == "characters" || kind == "spell-out" || kind == "verbatim")
    return Characters(content, english);
  if (kind == "cardinal" || kind == "number") return Cardinal(content, english);
  if (kind == "ordinal") return Ordinal(content, english);
  if (kind == "digits") {
    std::string_view text = Trim(content);
    return IsAllDigits(text) ? DigitWords(text, english) : std::string(content);
  }
  if (kind == "date") return Date(content, say_as.format, english);
  if (kind == "time") return Time(content, say_as.format, english);
  if (kind == "telephone") return Telephone(content, english);
  return std::string(content);
}

}  // namespace voxserve::text::ssml
