// Chinese rules (docs/text-normalization.md has the table): Arabic numerals in Chinese text, as
// WeTextProcessing's zh normalizer reads them, in one left-to-right pass. Full-width digits and
// ％ count as their ASCII forms. Numbers glued to Latin letters ("A4", "5G") are left alone.
#include <optional>
#include <vector>

#include "text/normalize/chinese_numbers.h"
#include "text/normalize/number_token.h"
#include "text/normalize/rule_scan.h"
#include "text/normalize/text_normalizer.h"

namespace voxserve::text::normalize {
namespace {

// Chinese number words reach 万亿 (10^16).
std::optional<uint64_t> ToNumber(std::string_view digits) {
  return normalize::ToNumber(digits, 16);
}

// A whole number: digit by digit when it is an identifier rather than a quantity (a leading
// zero, a mobile number's 11 digits starting with 1, more digits than 万亿 reach), else the
// cardinal.
std::string IntegerWords(std::string_view digits, bool grouped = false) {
  if (!grouped && ((digits.size() > 1 && digits.front() == '0') || digits.size() > 16 ||
                   (digits.size() == 11 && digits.front() == '1'))) {
    return ChineseDigits(digits);
  }
  auto value = ToNumber(digits);
  if (!value) return ChineseDigits(digits);
  return ChineseCardinal(*value);
}

std::string NumberWords(const NumberToken& number) {
  std::string words = IntegerWords(number.integer, number.grouped);
  if (!number.fraction.empty()) words += "点" + ChineseDigits(number.fraction);
  return words;
}

// Measure words (and the large-number words) before which 2 is read 两: 两个, 两本, 两万.
constexpr std::string_view kMeasureWords[] = {
    "个", "只",   "本",   "张",   "位",   "件",   "条",   "次",   "天",   "年",   "岁",
    "种", "份",   "台",   "辆",   "家",   "双",   "对",   "名",   "头",   "匹",   "块",
    "斤", "杯",   "瓶",   "碗",   "口",   "遍",   "周",   "层",   "间",   "座",   "片",
    "节", "页",   "篇",   "首",   "部",   "所",   "架",   "艘",   "棵",   "根",   "支",
    "把", "小时", "分钟", "秒钟", "星期", "个月", "公里", "千米", "公斤", "千克", "米",
    "克", "升",   "吨",   "元",   "角",   "万",   "千",   "百",   "亿",   "倍",   "点"};

// A count as it is said: 2 is 两 (两千克, 两元) unless it is a rank (第2) or part of a longer
// number.
std::string CountWords(const NumberToken& number, bool after_di) {
  if (number.integer == "2" && number.fraction.empty() && !after_di) return "两";
  return NumberWords(number);
}

struct Unit {
  std::string_view symbol;
  std::string_view spoken;
};

// Longer symbols before their prefixes.
constexpr Unit kUnits[] = {
    {"km/h", "千米每小时"},
    {"m/s", "米每秒"},
    {"kWh", "千瓦时"},
    {"\xC2\xB0"
     "C",
     "摄氏度"},
    {"\xC2\xB0"
     "F",
     "华氏度"},
    {"\xE2\x84\x83", "摄氏度"},
    {"\xC2\xB0", "度"},
    {"GHz", "吉赫兹"},
    {"MHz", "兆赫兹"},
    {"kHz", "千赫兹"},
    {"Hz", "赫兹"},
    {"kW", "千瓦"},
    {"mm", "毫米"},
    {"cm", "厘米"},
    {"km", "千米"},
    {"mg", "毫克"},
    {"kg", "千克"},
    {"ml", "毫升"},
    {"mL", "毫升"},
    {"ms", "毫秒"},
    {"min", "分钟"},
    {"m", "米"},
    {"g", "克"},
    {"L", "升"},
    {"W", "瓦"},
    {"V", "伏"},
    {"h", "小时"},
    {"s", "秒"},
};

struct Currency {
  std::string_view symbol;
  std::string_view name;
};

constexpr Currency kCurrencies[] = {{"\xC2\xA5", "元"},
                                    {"\xEF\xBF\xA5", "元"},
                                    {"$", "美元"},
                                    {"\xE2\x82\xAC", "欧元"},
                                    {"\xC2\xA3", "英镑"}};

// ¥12.50: 十二元五角; ¥0.05: 五分; ¥3.07: 三元零七分.
std::string Yuan(const NumberToken& number) {
  const uint64_t whole = ToNumber(number.integer).value_or(0);
  const unsigned jiao =
      number.fraction.size() >= 1 ? static_cast<unsigned>(number.fraction[0] - '0') : 0;
  const unsigned fen =
      number.fraction.size() >= 2 ? static_cast<unsigned>(number.fraction[1] - '0') : 0;
  std::string words;
  if (whole > 0 || (jiao == 0 && fen == 0)) {
    NumberToken integer = number;
    integer.fraction.clear();
    words = CountWords(integer, false) + "元";
  }
  if (jiao > 0) words += ChineseDigits(std::string(1, static_cast<char>('0' + jiao))) + "角";
  if (fen > 0) {
    if (jiao == 0 && whole > 0) words += "零";
    words += ChineseDigits(std::string(1, static_cast<char>('0' + fen))) + "分";
  }
  return words;
}

std::optional<Match> CurrencyAmount(std::string_view text, size_t at) {
  auto amount = AmountAt(text, at, kCurrencies);
  if (!amount) return std::nullopt;
  const Currency& currency = *amount->first;
  const NumberToken& number = amount->second;
  // 万 and 亿 after the amount belong to it: $3万 is 三万美元.
  for (std::string_view scale : {"万亿", "万", "亿"}) {
    if (StartsWith(text, number.end, scale)) {
      return Match{NumberWords(number) + std::string(scale) + std::string(currency.name),
                   number.end + scale.size()};
    }
  }
  if (currency.name == "元" && number.fraction.size() <= 2) {
    return Match{Yuan(number), number.end};
  }
  NumberToken trimmed = number;  // $12.50: 十二点五美元
  while (!trimmed.fraction.empty() && trimmed.fraction.back() == '0') trimmed.fraction.pop_back();
  return Match{NumberWords(trimmed) + std::string(currency.name), number.end};
}

// 2026-12-02, 2026/12/02, 2026.12.02 → 二零二六年十二月二日.
std::optional<Match> Date(std::string_view text, size_t at) {
  std::string_view year = DigitRun(text, at);
  size_t end = at + year.size();
  if (year.size() != 4 || end >= text.size()) return std::nullopt;
  const char separator = text[end];
  if (separator != '-' && separator != '/' && separator != '.') return std::nullopt;
  std::string_view month = DigitRun(text, end + 1);
  end += 1 + month.size();
  if (month.empty() || month.size() > 2 || end >= text.size() || text[end] != separator) {
    return std::nullopt;
  }
  std::string_view day = DigitRun(text, end + 1);
  end += 1 + day.size();
  if (day.empty() || day.size() > 2 || (end < text.size() && IsWordByte(text[end]))) {
    return std::nullopt;
  }
  const uint64_t m = *ToNumber(month);
  const uint64_t d = *ToNumber(day);
  if (m < 1 || m > 12 || d < 1 || d > 31) return std::nullopt;
  // A date already written with 日 or 号 after it keeps that word.
  const bool has_day_word = StartsWith(text, end, "日") || StartsWith(text, end, "号");
  return Match{ChineseDigits(year) + "年" + ChineseCardinal(m) + "月" + ChineseCardinal(d) +
                   (has_day_word ? "" : "日"),
               end};
}

// 15:30 → 十五点三十分; 9:05 → 九点零五分; 15:00 → 十五点; 2:30 → 两点三十分; 8:30:05 →
// 八点三十分零五秒.
std::optional<Match> Time(std::string_view text, size_t at) {
  std::string_view hours = DigitRun(text, at);
  size_t colon = at + hours.size();
  std::string_view separator = ":";
  if (StartsWith(text, colon, "\xEF\xBC\x9A")) separator = "\xEF\xBC\x9A";  // ：
  if (hours.empty() || hours.size() > 2 || !StartsWith(text, colon, separator) ||
      DigitRun(text, colon + separator.size()).size() != 2) {
    return std::nullopt;
  }
  const uint64_t hour = *ToNumber(hours);
  const uint64_t minute = *ToNumber(text.substr(colon + separator.size(), 2));
  size_t end = colon + separator.size() + 2;
  std::optional<uint64_t> second;
  if (StartsWith(text, end, separator) && DigitRun(text, end + separator.size()).size() == 2) {
    second = *ToNumber(text.substr(end + separator.size(), 2));
    end += separator.size() + 2;
  }
  if (hour > 24 || minute > 59 || (second && *second > 59) ||
      (end < text.size() && IsWordByte(text[end]))) {
    return std::nullopt;
  }
  auto two_digits = [](uint64_t value) {
    return value == 0 ? std::string("零") : (value < 10 ? "零" : "") + ChineseCardinal(value);
  };
  std::string words = (hour == 2 ? std::string("两") : ChineseCardinal(hour)) + "点";
  if (minute > 0 || second) words += two_digits(minute) + "分";
  if (second) words += two_digits(*second) + "秒";
  return Match{words, end};
}

std::optional<Match> NumberExpression(std::string_view text, size_t at, bool after_di) {
  if (auto date = Date(text, at)) return date;
  if (auto time = Time(text, at)) return time;
  auto number = ReadNumber(text, at);
  if (!number) return std::nullopt;
  const size_t end = number->end;
  const bool whole = number->fraction.empty();

  if (whole && !number->grouped && number->integer.size() == 4 && StartsWith(text, end, "年")) {
    return Match{ChineseDigits(number->integer), end};  // 2026年: a year, read digit by digit
  }
  if (end < text.size() && text[end] == '%') {
    return Match{"百分之" + NumberWords(*number), end + 1};
  }
  // Fractions and ranges between two plain numbers: 1/2 → 二分之一; 3-5, 3~5 → 三到五.
  if (end + 1 < text.size() && (text[end] == '/' || text[end] == '-' || text[end] == '~') &&
      IsDigit(text[end + 1])) {
    auto second = ReadNumber(text, end + 1);
    if (second && (second->end >= text.size() || !IsWordByte(text[second->end])) &&
        !(second->end < text.size() && (text[second->end] == '/' || text[second->end] == '-'))) {
      if (text[end] == '/') {
        if (whole && second->fraction.empty() && ToNumber(second->integer).value_or(0) > 0) {
          return Match{NumberWords(*second) + "分之" + NumberWords(*number), second->end};
        }
      } else {
        return Match{NumberWords(*number) + "到" + NumberWords(*second), second->end};
      }
    }
  }
  for (size_t start : {end, end + 1}) {
    if (start == end + 1 && (end >= text.size() || text[end] != ' ')) break;
    for (const Unit& unit : kUnits) {
      if (StartsWith(text, start, unit.symbol) && (start + unit.symbol.size() >= text.size() ||
                                                   !IsWordByte(text[start + unit.symbol.size()]))) {
        return Match{CountWords(*number, after_di) + std::string(unit.spoken),
                     start + unit.symbol.size()};
      }
    }
  }
  if (end < text.size() && IsWordByte(text[end])) return std::nullopt;
  if (whole && number->integer == "2" && !after_di) {
    for (std::string_view measure : kMeasureWords) {
      if (StartsWith(text, end, measure)) return Match{"两", end};
    }
  }
  return Match{NumberWords(*number), end};
}

// Full-width digits and ％ as ASCII, so that one set of rules reads both.
std::string AsciiDigits(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size(); ++at) {
    if (at + 2 < text.size() && static_cast<unsigned char>(text[at]) == 0xEF &&
        static_cast<unsigned char>(text[at + 1]) == 0xBC) {
      const unsigned char last = static_cast<unsigned char>(text[at + 2]);
      if (last >= 0x90 && last <= 0x99) {
        out += static_cast<char>('0' + (last - 0x90));
        at += 2;
        continue;
      }
      if (last == 0x85) {
        out += '%';
        at += 2;
        continue;
      }
    }
    out += text[at];
  }
  return out;
}

class ChineseRules : public NormalizationRules {
 public:
  std::optional<Match> AtWord(std::string_view, size_t) const override { return std::nullopt; }
  std::optional<Match> AtNumber(std::string_view text, size_t at,
                                std::string_view written) const override {
    return NumberExpression(text, at, written.ends_with("第"));
  }
  std::optional<Match> AtSymbol(std::string_view text, size_t at) const override {
    if (text[at] == '-' && at + 1 < text.size() && IsDigit(text[at + 1])) {
      auto match = NumberExpression(text, at + 1, false);
      if (match) match->words.insert(0, "负");
      return match;
    }
    return CurrencyAmount(text, at);
  }
};

}  // namespace

std::string NormalizeChinese(std::string_view original) {
  return NormalizeWithRules(AsciiDigits(original), ChineseRules());
}

}  // namespace voxserve::text::normalize
