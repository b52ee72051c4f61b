// The rules of upstream cosyvoice/utils/frontend_utils.py, rewritten over code points (Python
// str semantics), and inflect 2.1's number_to_words for digit strings (what spell_out_number
// calls; inflect is Debian's python3-inflect, the version the oracle tests run).
#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <array>
#include <string>

#include "engine/cosyvoice/text_frontend.h"

namespace voxserve::engine::cosyvoice::frontend_rules {
namespace {

std::u32string ToU32(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  const auto* bytes = reinterpret_cast<const uint8_t*>(utf8.data());
  std::size_t offset = 0;
  while (offset < utf8.size()) {
    UChar32 c;
    U8_NEXT(bytes, offset, utf8.size(), c);
    out.push_back(c < 0 ? U'\uFFFD' : static_cast<char32_t>(c));  // input is valid UTF-8
  }
  return out;
}

std::string ToUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text) {
    uint8_t buffer[U8_MAX_LENGTH];
    int32_t length = 0;
    U8_APPEND_UNSAFE(buffer, length, static_cast<UChar32>(c));
    out.append(reinterpret_cast<const char*>(buffer), static_cast<std::size_t>(length));
  }
  return out;
}

std::u32string ReplaceAll(std::u32string text, std::u32string_view from, std::u32string_view to) {
  std::u32string out;
  std::size_t start = 0;
  for (std::size_t at = text.find(from); at != std::u32string::npos; at = text.find(from, start)) {
    out.append(text, start, at - start);
    out.append(to);
    start = at + from.size();
  }
  out.append(text, start);
  return out;
}

// inflect's word tables (inflect.py:1857-1894: unit, teen, ten, mill).
constexpr std::array<std::string_view, 10> kUnit = {"",     "one", "two",   "three", "four",
                                                    "five", "six", "seven", "eight", "nine"};
constexpr std::array<std::string_view, 10> kTeen = {"ten",      "eleven",  "twelve",  "thirteen",
                                                    "fourteen", "fifteen", "sixteen", "seventeen",
                                                    "eighteen", "nineteen"};
constexpr std::array<std::string_view, 10> kTen = {"",      "",      "twenty",  "thirty", "forty",
                                                   "fifty", "sixty", "seventy", "eighty", "ninety"};
constexpr std::array<std::string_view, 12> kScale = {
    "",           "thousand",   "million",   "billion",   "trillion", "quadrillion", "quintillion",
    "sextillion", "septillion", "octillion", "nonillion", "decillion"};

// "twenty-one", "twelve", "seven", "" for 0.
std::string TensWords(int tens, int units) {
  if (tens == 1) return std::string(kTeen[units]);
  std::string out(kTen[tens]);
  if (tens != 0 && units != 0) out += '-';
  out += kUnit[units];
  return out;
}

// One group of three digits with its scale word; "" when the group is 000.
std::string GroupWords(int hundreds, int tens, int units, std::size_t scale) {
  std::string out;
  if (hundreds != 0) {
    out = std::string(kUnit[hundreds]) + " hundred";
    if (tens != 0 || units != 0) out += " and " + TensWords(tens, units);
  } else {
    out = TensWords(tens, units);
  }
  if (!out.empty() && scale > 0) out += " " + std::string(kScale[scale]);
  return out;
}

bool IsPythonDigit(char32_t c) {  // str.isdigit(): Numeric_Type Decimal or Digit
  const auto type = u_getIntPropertyValue(static_cast<UChar32>(c), UCHAR_NUMERIC_TYPE);
  return type == U_NT_DECIMAL || type == U_NT_DIGIT;
}

}  // namespace

bool ContainsChinese(std::string_view utf8) {
  for (char32_t c : ToU32(utf8)) {
    if (c >= 0x4E00 && c <= 0x9FFF) return true;  // frontend_utils.py:17
  }
  return false;
}

std::string ReplaceBlank(std::string_view utf8) {
  // frontend_utils.py:121-130: a space stays only between two ASCII characters that are not
  // spaces. Python's text[i - 1] at i = 0 is the last character; text[i + 1] past the end would
  // raise (upstream strips the text first, so it never happens); here that space is dropped.
  const std::u32string text = ToU32(utf8);
  std::u32string out;
  auto ascii_non_space = [](char32_t c) { return c < 0x80 && c != U' '; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != U' ') {
      out.push_back(text[i]);
      continue;
    }
    const char32_t before = i == 0 ? text.back() : text[i - 1];
    if (i + 1 < text.size() && ascii_non_space(text[i + 1]) && ascii_non_space(before)) {
      out.push_back(U' ');
    }
  }
  return ToUtf8(out);
}

std::string ReplaceCornerMark(std::string_view utf8) {  // frontend_utils.py:26-29
  std::u32string text = ReplaceAll(ToU32(utf8), U"²", U"平方");
  return ToUtf8(ReplaceAll(std::move(text), U"³", U"立方"));
}

std::string RemoveBracket(std::string_view utf8) {  // frontend_utils.py:33-38
  std::u32string text = ToU32(utf8);
  for (std::u32string_view gone : {U"（", U"）", U"【", U"】", U"`"}) {
    text = ReplaceAll(std::move(text), gone, U"");
  }
  return ToUtf8(ReplaceAll(std::move(text), U"——", U" "));
}

bool IsOnlyPunctuation(std::string_view utf8) {
  // frontend_utils.py:133-136: regex.fullmatch(r'^[\p{P}\p{S}]*$', text).
  for (char32_t c : ToU32(utf8)) {
    const auto mask = U_GET_GC_MASK(static_cast<UChar32>(c));
    if ((mask & (U_GC_P_MASK | U_GC_S_MASK)) == 0) return false;
  }
  return true;
}

std::string NumberToWords(std::u32string_view digits) {
  // inflect.py number_to_words/enword with group=0: characters that are not decimal (\D, e.g.
  // '²', which isdigit() accepts) are dropped, nothing left reads "zero"; 0 and 1 are "zero"
  // and "one"; otherwise groups of three from the right, "and" inside a group after
  // "hundred", groups joined by ", ", and the last ", " turned into " and " when the last
  // group is a single word ("one thousand and one", but "one thousand, one hundred").
  std::vector<int> values;
  for (char32_t c : digits) {
    if (u_charType(static_cast<UChar32>(c)) == U_DECIMAL_DIGIT_NUMBER) {
      values.push_back(u_charDigitValue(static_cast<UChar32>(c)));
    }
  }
  std::size_t first = 0;
  while (first < values.size() && values[first] == 0) ++first;
  values.erase(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(first));
  if (values.empty()) return "zero";
  if (values.size() == 1 && values[0] == 1) return "one";
  if (values.size() > 3 * kScale.size()) {
    // inflect raises NumOutOfRangeError past decillion (36 digits) and upstream's request
    // fails; reading the digits one by one keeps the request alive (a difference, documented).
    std::string out;
    for (int v : values) {
      if (!out.empty()) out += ' ';
      out += v == 0 ? "zero" : std::string(kUnit[v]);
    }
    return out;
  }
  // Left-padding to whole groups: inflect reads a leading "12" or "5" as tens/units alone,
  // which is what a group 012 or 005 reads as.
  values.insert(values.begin(), (3 - values.size() % 3) % 3, 0);
  std::vector<std::string> parts;  // most significant first
  const std::size_t groups = values.size() / 3;
  for (std::size_t g = 0; g < groups; ++g) {
    std::string words =
        GroupWords(values[3 * g], values[3 * g + 1], values[3 * g + 2], groups - 1 - g);
    if (!words.empty()) parts.push_back(std::move(words));
  }
  std::string out = parts.front();
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const bool last_is_one_word = i + 1 == parts.size() && parts[i].find(' ') == std::string::npos;
    out += last_is_one_word ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

std::string SpellOutNumber(std::string_view utf8) {  // frontend_utils.py:42-58
  const std::u32string text = ToU32(utf8);
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!IsPythonDigit(text[i])) {
      out += ToUtf8(text.substr(i, 1));
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && IsPythonDigit(text[end])) ++end;
    out += NumberToWords(std::u32string_view(text).substr(i, end - i));
    i = end;
  }
  return out;
}

std::vector<std::string> SplitParagraph(std::string_view utf8,
                                        const text::Qwen2Tokenizer& tokenizer, bool chinese,
                                        SplitLimits limits) {
  // frontend_utils.py:64-117 with comma_split=False.
  std::u32string text = ToU32(utf8);
  if (text.empty()) return {};  // upstream: IndexError on text[-1]
  const std::u32string_view marks =
      chinese ? std::u32string_view(U"。？！；：、.?!;") : std::u32string_view(U".?!;:");
  auto is_mark = [&](char32_t c) { return marks.find(c) != std::u32string_view::npos; };
  auto length = [&](const std::u32string& piece) -> std::size_t {
    if (chinese) return piece.size();
    auto ids = tokenizer.Encode(ToUtf8(piece));  // valid UTF-8 in, so never an error
    return ids.ok() ? ids->size() : piece.size();
  };
  if (!is_mark(text.back())) text += chinese ? U'。' : U'.';

  std::vector<std::u32string> utts;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!is_mark(text[i])) continue;
    if (i > start) utts.push_back(text.substr(start, i - start) + text[i]);
    // A closing quote right after the mark joins the sentence (and, as upstream, replaces the
    // mark when the sentence was empty, e.g. '.."'). With no sentence yet upstream raises
    // IndexError; here the quote then starts the next sentence.
    if (i + 1 < text.size() && (text[i + 1] == U'"' || text[i + 1] == U'”') && !utts.empty()) {
      utts.back() += text[i + 1];
      start = i + 2;
    } else {
      start = i + 1;
    }
  }

  std::vector<std::string> pieces;
  std::u32string current;
  const auto max_n = static_cast<std::size_t>(limits.token_max_n);
  const auto min_n = static_cast<std::size_t>(limits.token_min_n);
  for (const std::u32string& utt : utts) {
    if (length(current + utt) > max_n && length(current) > min_n) {
      pieces.push_back(ToUtf8(current));
      current.clear();
    }
    current += utt;
  }
  if (!current.empty()) {
    if (length(current) < static_cast<std::size_t>(limits.merge_len) && !pieces.empty()) {
      pieces.back() += ToUtf8(current);
    } else {
      pieces.push_back(ToUtf8(current));
    }
  }
  return pieces;
}

}  // namespace voxserve::engine::cosyvoice::frontend_rules
