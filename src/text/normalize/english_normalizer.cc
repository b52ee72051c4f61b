// English rules (docs/text-normalization.md has the table). One left-to-right pass: at each
// word boundary the longest rule that matches is written out, everything else is copied. A
// number glued to letters that are no unit, ordinal suffix or am/pm ("mp3", "3D", "4K") is left
// as it is: reading it is the engine's business, and a wrong guess is worse than none.
#include <array>
#include <optional>
#include <vector>

#include "text/normalize/english_numbers.h"
#include "text/normalize/number_token.h"
#include "text/normalize/rule_scan.h"
#include "text/normalize/text_normalizer.h"

namespace voxserve::text::normalize {
namespace {

bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

// After an abbreviation that ended with a period: does that period also end the sentence? Yes
// at the end of the text and before a capital (the splitter still needs the full stop).
bool EndsSentence(std::string_view text, size_t end) {
  size_t next = end;
  while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) ++next;
  if (next >= text.size() || text[next] == '\n') return true;
  return next > end && IsUpper(text[next]);
}

// English number words reach the quadrillions.
std::optional<uint64_t> ToNumber(std::string_view digits) {
  return normalize::ToNumber(digits, 15);
}

// A whole number as it is read: digit by digit with a leading zero ("007") or past the largest
// cardinal, else the cardinal.
std::string IntegerWords(std::string_view digits) {
  auto value = ToNumber(digits);
  if (!value || (digits.size() > 1 && digits.front() == '0')) return EnglishDigits(digits);
  return EnglishCardinal(*value);
}

std::string NumberWords(const NumberToken& number) {
  std::string words = IntegerWords(number.integer);
  if (!number.fraction.empty()) words += " point " + EnglishDigits(number.fraction);
  return words;
}

bool IsOne(const NumberToken& number) { return number.integer == "1" && number.fraction.empty(); }

struct Unit {
  std::string_view symbol;
  std::string_view singular;
  std::string_view plural;
};

// Longer symbols before their prefixes ("km/h" before "km", "mph" before "m").
constexpr Unit kUnits[] = {
    {"km/h", "kilometer per hour", "kilometers per hour"},
    {"m/s", "meter per second", "meters per second"},
    {"mph", "mile per hour", "miles per hour"},
    {"kWh", "kilowatt hour", "kilowatt hours"},
    {"\xC2\xB0"
     "C",
     "degree Celsius", "degrees Celsius"},
    {"\xC2\xB0"
     "F",
     "degree Fahrenheit", "degrees Fahrenheit"},
    {"\xE2\x84\x83", "degree Celsius", "degrees Celsius"},
    {"\xE2\x84\x89", "degree Fahrenheit", "degrees Fahrenheit"},
    {"\xC2\xB0", "degree", "degrees"},
    {"GHz", "gigahertz", "gigahertz"},
    {"MHz", "megahertz", "megahertz"},
    {"kHz", "kilohertz", "kilohertz"},
    {"Hz", "hertz", "hertz"},
    {"TB", "terabyte", "terabytes"},
    {"GB", "gigabyte", "gigabytes"},
    {"MB", "megabyte", "megabytes"},
    {"kB", "kilobyte", "kilobytes"},
    {"KB", "kilobyte", "kilobytes"},
    {"kW", "kilowatt", "kilowatts"},
    {"mm", "millimeter", "millimeters"},
    {"cm", "centimeter", "centimeters"},
    {"km", "kilometer", "kilometers"},
    {"mg", "milligram", "milligrams"},
    {"kg", "kilogram", "kilograms"},
    {"ml", "milliliter", "milliliters"},
    {"mL", "milliliter", "milliliters"},
    {"ms", "millisecond", "milliseconds"},
    {"min", "minute", "minutes"},
    {"mi", "mile", "miles"},
    {"m", "meter", "meters"},
    {"g", "gram", "grams"},
    {"lbs", "pound", "pounds"},
    {"lb", "pound", "pounds"},
    {"oz", "ounce", "ounces"},
    {"ft", "foot", "feet"},
    {"yd", "yard", "yards"},
    {"L", "liter", "liters"},
    {"W", "watt", "watts"},
    {"V", "volt", "volts"},
    {"USD", "dollar", "dollars"},
    {"EUR", "euro", "euros"},
    {"GBP", "pound", "pounds"},
    {"JPY", "yen", "yen"},
    {"sec", "second", "seconds"},
    {"hrs", "hour", "hours"},
};

struct Currency {
  std::string_view symbol;
  std::string_view singular, plural;
  std::string_view cent, cents;  // empty: no subunit (yen)
};

constexpr Currency kCurrencies[] = {
    {"$", "dollar", "dollars", "cent", "cents"},
    {"\xE2\x82\xAC", "euro", "euros", "cent", "cents"},
    {"\xC2\xA3", "pound", "pounds", "penny", "pence"},
    {"\xC2\xA5", "yen", "yen", "", ""},
};

constexpr std::array<std::string_view, 12> kMonths = {
    "January", "February", "March",     "April",   "May",      "June",
    "July",    "August",   "September", "October", "November", "December"};

struct Abbreviation {
  std::string_view written;
  std::string_view spoken;
  bool may_end_sentence = false;  // keeps its full stop where the sentence ends
};

constexpr Abbreviation kAbbreviations[] = {
    {"Mrs.", "Missus", false},      {"Mr.", "Mister", false},
    {"Ms.", "Miz", false},          {"Dr.", "Doctor", false},
    {"Prof.", "Professor", false},  {"Sr.", "Senior", true},
    {"Jr.", "Junior", true},        {"vs.", "versus", false},
    {"etc.", "et cetera", true},    {"e.g.", "for example", false},
    {"i.e.", "that is", false},     {"approx.", "approximately", false},
    {"Inc.", "Incorporated", true}, {"Ltd.", "Limited", true},
    {"Corp.", "Corporation", true}, {"Co.", "Company", true},
    {"Ave.", "Avenue", true},       {"Rd.", "Road", true},
    {"Blvd.", "Boulevard", true},   {"Mt.", "Mount", false},
    {"Jan.", "January", false},     {"Feb.", "February", false},
    {"Mar.", "March", false},       {"Apr.", "April", false},
    {"Jun.", "June", false},        {"Jul.", "July", false},
    {"Aug.", "August", false},      {"Sept.", "September", false},
    {"Sep.", "September", false},   {"Oct.", "October", false},
    {"Nov.", "November", false},    {"Dec.", "December", false},
    {"dept.", "department", false}, {"Dept.", "Department", false},
    {"vs", "versus", false},        {"approx", "approximately", false},
};

// Mr, Mrs, Ms, Dr without their full stop (British usage), before a name only.
constexpr Abbreviation kTitlesWithoutStop[] = {{"Mrs", "Missus", false},
                                               {"Mr", "Mister", false},
                                               {"Ms", "Miz", false},
                                               {"Dr", "Doctor", false}};

// Words after which a four-digit number is a year: "in 1999", "since 2010".
bool IsYearCue(std::string_view word) {
  static constexpr std::string_view kCues[] = {"in",    "since",  "from",   "until", "till",
                                               "by",    "year",   "before", "after", "of",
                                               "circa", "during", "around", "to"};
  std::string lower;
  for (char c : word) lower += Lower(c);
  for (std::string_view cue : kCues) {
    if (lower == cue) return true;
  }
  return false;
}

std::string_view PreviousWord(std::string_view text, size_t at) {
  size_t end = at;
  while (end > 0 && text[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && IsAsciiLetter(text[begin - 1])) --begin;
  return text.substr(begin, end - begin);
}

// "am", "pm", "a.m.", "p.m." in either case after a time or an hour, with at most one space.
std::optional<Match> Meridiem(std::string_view text, size_t at) {
  size_t start = at < text.size() && text[at] == ' ' ? at + 1 : at;
  if (start >= text.size()) return std::nullopt;
  const char first = Lower(text[start]);
  if (first != 'a' && first != 'p') return std::nullopt;
  const std::string spoken = first == 'a' ? " ay em" : " pee em";
  if (start + 1 < text.size() && Lower(text[start + 1]) == 'm' && WordEndsAt(text, start + 2)) {
    return Match{spoken, start + 2};
  }
  if (start + 3 < text.size() && text[start + 1] == '.' && Lower(text[start + 2]) == 'm' &&
      text[start + 3] == '.') {
    return Match{spoken + (EndsSentence(text, start + 4) ? "." : ""), start + 4};
  }
  return std::nullopt;
}

std::optional<Match> IsoDate(std::string_view text, size_t at) {
  if (DigitRun(text, at).size() != 4 || at + 10 > text.size() || text[at + 4] != '-' ||
      text[at + 7] != '-' || DigitRun(text, at + 5).size() != 2 ||
      DigitRun(text, at + 8).size() != 2 || !WordEndsAt(text, at + 10)) {
    return std::nullopt;
  }
  const uint64_t year = *ToNumber(text.substr(at, 4));
  const uint64_t month = *ToNumber(text.substr(at + 5, 2));
  const uint64_t day = *ToNumber(text.substr(at + 8, 2));
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  return Match{
      std::string(kMonths[month - 1]) + " " + EnglishOrdinal(day) + ", " + EnglishYear(year),
      at + 10};
}

std::optional<Match> Time(std::string_view text, size_t at) {
  std::string_view hours = DigitRun(text, at);
  size_t colon = at + hours.size();
  if (hours.empty() || hours.size() > 2 || colon >= text.size() || text[colon] != ':' ||
      DigitRun(text, colon + 1).size() != 2) {
    return std::nullopt;
  }
  const uint64_t hour = *ToNumber(hours);
  const uint64_t minute = *ToNumber(text.substr(colon + 1, 2));
  size_t end = colon + 3;
  std::optional<uint64_t> second;
  if (end < text.size() && text[end] == ':' && DigitRun(text, end + 1).size() == 2) {
    second = *ToNumber(text.substr(end + 1, 2));
    end += 3;
  }
  if (hour > 23 || minute > 59 || (second && *second > 59) ||
      (end < text.size() && IsDigit(text[end]))) {
    return std::nullopt;
  }
  std::string words = EnglishCardinal(hour);
  if (minute == 0) {
    words += hour <= 12 && hour > 0 ? " o'clock" : " hundred";
  } else if (minute < 10) {
    words += " oh " + EnglishCardinal(minute);
  } else {
    words += " " + EnglishCardinal(minute);
  }
  if (second) {
    words += " and " + EnglishCardinal(*second) + (*second == 1 ? " second" : " seconds");
  }
  if (auto meridiem = Meridiem(text, end)) {
    if (minute == 0 && hour <= 12) words.resize(words.size() - 8);  // "nine am", not "o'clock am"
    return Match{words + meridiem->words, meridiem->end};
  }
  if (!WordEndsAt(text, end)) return std::nullopt;
  return Match{words, end};
}

std::optional<Match> CurrencyAmount(std::string_view text, size_t at) {
  auto amount = AmountAt(text, at, kCurrencies);
  if (!amount || amount->second.integer.size() > 15) return std::nullopt;
  const Currency& currency = *amount->first;
  const NumberToken& number = amount->second;
  size_t end = number.end;
  for (std::string_view scale : {"thousand", "million", "billion", "trillion"}) {
    if (end < text.size() && text[end] == ' ' && StartsWith(text, end + 1, scale) &&
        WordEndsAt(text, end + 1 + scale.size())) {
      return Match{
          NumberWords(number) + " " + std::string(scale) + " " + std::string(currency.plural),
          end + 1 + scale.size()};
    }
  }
  if (!WordEndsAt(text, end)) return std::nullopt;
  const uint64_t whole = *ToNumber(number.integer);
  if (number.fraction.size() > 2 || (currency.cent.empty() && !number.fraction.empty())) {
    return Match{NumberWords(number) + " " + std::string(currency.plural), end};
  }
  std::string fraction = number.fraction;
  if (fraction.size() == 1) fraction += '0';
  const uint64_t cents = fraction.empty() ? 0 : *ToNumber(fraction);
  std::string words;
  if (whole > 0 || cents == 0) {
    words = IntegerWords(number.integer) + " " +
            std::string(whole == 1 ? currency.singular : currency.plural);
  }
  if (cents > 0) {
    if (!words.empty()) words += " and ";
    words +=
        EnglishCardinal(cents) + " " + std::string(cents == 1 ? currency.cent : currency.cents);
  }
  return Match{words, end};
}

// Digit groups joined by hyphens: three or more ("1-800-555-0199"), or 3 + 4 ("555-0199"), are
// a telephone number read digit by digit, a pause between groups; two other groups are a range
// ("10-20": "ten to twenty"; years when both are years).
std::optional<Match> HyphenatedDigits(std::string_view text, size_t at) {
  std::vector<std::string_view> groups = {DigitRun(text, at)};
  size_t end = at + groups.back().size();
  while (end + 1 < text.size() && text[end] == '-' && IsDigit(text[end + 1])) {
    groups.push_back(DigitRun(text, end + 1));
    end += 1 + groups.back().size();
  }
  if (groups.size() < 2 || !WordEndsAt(text, end) ||
      (end < text.size() && text[end] == '.' && end + 1 < text.size() && IsDigit(text[end + 1]))) {
    return std::nullopt;
  }
  if (groups.size() >= 3 || (groups[0].size() == 3 && groups[1].size() == 4)) {
    std::string words;
    for (std::string_view group : groups)
      words += (words.empty() ? "" : ", ") + EnglishDigits(group);
    return Match{words, end};
  }
  if (groups[0].size() > 4 || groups[1].size() > 4) return std::nullopt;
  const uint64_t from = *ToNumber(groups[0]);
  const uint64_t to = *ToNumber(groups[1]);
  const bool years = groups[0].size() == 4 && groups[1].size() == 4 && from >= 1100 &&
                     from <= 2099 && to >= 1100 && to <= 2099;
  auto read = [years](std::string_view digits) {
    return years ? EnglishYear(*ToNumber(digits)) : IntegerWords(digits);
  };
  return Match{read(groups[0]) + " to " + read(groups[1]), end};
}

// A number and what follows it: an ordinal suffix, a decade's "s", a percent sign, a unit,
// am/pm. Null when letters follow that none of these explains.
std::optional<Match> NumberExpression(std::string_view text, size_t at) {
  if (auto date = IsoDate(text, at)) return date;
  if (auto time = Time(text, at)) return time;
  if (auto digits = HyphenatedDigits(text, at)) return digits;
  auto number = ReadNumber(text, at);
  if (!number) return std::nullopt;
  const size_t end = number->end;
  const bool whole = number->fraction.empty();

  if (whole && end + 2 <= text.size() && WordEndsAt(text, end + 2)) {
    std::string suffix = {Lower(text[end]), end + 1 < text.size() ? Lower(text[end + 1]) : ' '};
    if (suffix == "st" || suffix == "nd" || suffix == "rd" || suffix == "th") {
      if (auto value = ToNumber(number->integer)) return Match{EnglishOrdinal(*value), end + 2};
    }
  }
  if (whole && !number->grouped && number->integer.size() == 4 && number->integer.back() == '0' &&
      end < text.size() && text[end] == 's' && WordEndsAt(text, end + 1)) {
    std::string year = EnglishYear(*ToNumber(number->integer));
    if (year.back() == 'y') {
      year = year.substr(0, year.size() - 1) + "ies";
    } else {
      year += 's';
    }
    return Match{year, end + 1};
  }
  if (end < text.size() && text[end] == '%') {
    return Match{NumberWords(*number) + " percent", end + 1};
  }
  for (size_t start : {end, end + 1}) {
    if (start == end + 1 && (end >= text.size() || text[end] != ' ')) break;
    for (const Unit& unit : kUnits) {
      if (StartsWith(text, start, unit.symbol) && WordEndsAt(text, start + unit.symbol.size())) {
        // "°" alone is not a word character, so "25°C" splits after it: the longer symbols
        // come first in the table.
        return Match{
            NumberWords(*number) + " " + std::string(IsOne(*number) ? unit.singular : unit.plural),
            start + unit.symbol.size()};
      }
    }
  }
  if (whole && !number->grouped && number->integer.size() <= 2) {
    if (auto meridiem = Meridiem(text, end)) {
      return Match{IntegerWords(number->integer) + meridiem->words, meridiem->end};
    }
  }
  if (!WordEndsAt(text, end)) return std::nullopt;
  if (whole && !number->grouped && number->integer.size() == 4 &&
      IsYearCue(PreviousWord(text, at))) {
    return Match{EnglishYear(*ToNumber(number->integer)), end};
  }
  return Match{NumberWords(*number), end};
}

std::optional<Match> AbbreviationAt(std::string_view text, size_t at) {
  if (StartsWith(text, at, "St.") && !(at + 3 < text.size() && IsAsciiLetter(text[at + 3]))) {
    // "Main St." is a street, "St. Louis" a saint: a capitalized word before it says street.
    std::string_view before = PreviousWord(text, at);
    const bool street = !before.empty() && IsUpper(before.front());
    return Match{street ? std::string("Street") + (EndsSentence(text, at + 3) ? "." : "")
                        : std::string("Saint"),
                 at + 3};
  }
  if (StartsWith(text, at, "No.") && at + 3 < text.size()) {
    size_t next = text[at + 3] == ' ' ? at + 4 : at + 3;
    if (next < text.size() && IsDigit(text[next])) return Match{"number ", next};
  }
  for (const Abbreviation& abbreviation : kAbbreviations) {
    if (!StartsWith(text, at, abbreviation.written)) continue;
    const size_t end = at + abbreviation.written.size();
    if (end < text.size() && IsAsciiLetter(text[end])) continue;
    if (abbreviation.written.back() != '.' && !WordEndsAt(text, end)) continue;
    std::string spoken(abbreviation.spoken);
    if (abbreviation.may_end_sentence && EndsSentence(text, end)) spoken += '.';
    return Match{spoken, end};
  }
  for (const Abbreviation& title : kTitlesWithoutStop) {
    const size_t end = at + title.written.size();
    if (StartsWith(text, at, title.written) && end + 1 < text.size() && text[end] == ' ' &&
        IsUpper(text[end + 1])) {
      return Match{std::string(title.spoken), end};
    }
  }
  return std::nullopt;
}

class EnglishRules : public NormalizationRules {
 public:
  std::optional<Match> AtWord(std::string_view text, size_t at) const override {
    return AbbreviationAt(text, at);
  }
  std::optional<Match> AtNumber(std::string_view text, size_t at,
                                std::string_view /*written*/) const override {
    return NumberExpression(text, at);
  }
  std::optional<Match> AtSymbol(std::string_view text, size_t at) const override {
    const char c = text[at];
    const bool digit_follows = at + 1 < text.size() && IsDigit(text[at + 1]);
    if (c == '-' && digit_follows && (at == 0 || text[at - 1] == ' ' || text[at - 1] == '(')) {
      return Prefixed("minus ", NumberExpression(text, at + 1));
    }
    if (c == '#' && digit_follows) return Prefixed("number ", NumberExpression(text, at + 1));
    if (c == '&' && at > 0 && at + 1 < text.size() && text[at - 1] == ' ' && text[at + 1] == ' ') {
      return Match{"and", at + 1};
    }
    return CurrencyAmount(text, at);
  }

 private:
  static std::optional<Match> Prefixed(std::string_view prefix, std::optional<Match> match) {
    if (match) match->words.insert(0, prefix);
    return match;
  }
};

}  // namespace

std::string NormalizeEnglish(std::string_view text) {
  return NormalizeWithRules(text, EnglishRules());
}

}  // namespace voxserve::text::normalize
