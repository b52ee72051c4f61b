#include "engine/cosyvoice/text_frontend.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_replace.h"
#include "core/error.h"
#include "text/utf8.h"

namespace voxserve::engine::cosyvoice {
namespace {

using namespace frontend_rules;  // NOLINT(build/namespaces): this file is their one caller

// Python's str.isspace() set (CPython _PyUnicode_IsWhitespace: bidi WS/B/S or Zs), what
// text.strip() removes; wider than Unicode White_Space by U+001C..U+001F.
bool IsPythonSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// The byte length of the UTF-8 sequence that starts with `lead`.
std::size_t SequenceLength(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
}

char32_t CodePointAt(std::string_view utf8, std::size_t at) {
  const auto* b = reinterpret_cast<const unsigned char*>(utf8.data() + at);
  switch (SequenceLength(b[0])) {
    case 1:
      return b[0];
    case 2:
      return ((b[0] & 0x1Fu) << 6) | (b[1] & 0x3Fu);
    case 3:
      return ((b[0] & 0x0Fu) << 12) | ((b[1] & 0x3Fu) << 6) | (b[2] & 0x3Fu);
    default:
      return ((b[0] & 0x07u) << 18) | ((b[1] & 0x3Fu) << 12) | ((b[2] & 0x3Fu) << 6) |
             (b[3] & 0x3Fu);
  }
}

std::string_view PythonStrip(std::string_view utf8) {
  std::size_t begin = 0;
  while (begin < utf8.size() && IsPythonSpace(CodePointAt(utf8, begin))) {
    begin += SequenceLength(static_cast<unsigned char>(utf8[begin]));
  }
  std::size_t end = utf8.size();
  while (end > begin) {
    std::size_t last = end - 1;
    while (last > begin && (static_cast<unsigned char>(utf8[last]) & 0xC0) == 0x80) --last;
    if (!IsPythonSpace(CodePointAt(utf8, last))) break;
    end = last;
  }
  return utf8.substr(begin, end - begin);
}

// re.sub(r'[，,、]+$', '。', text) (frontend.py:147) on text without newlines.
std::string FinalCommasToFullStop(std::string text) {
  std::size_t end = text.size();
  for (;;) {
    if (end >= 1 && text[end - 1] == ',') {
      end -= 1;
    } else if (end >= 3 &&
               (text.compare(end - 3, 3, "，") == 0 || text.compare(end - 3, 3, "、") == 0)) {
      end -= 3;
    } else {
      break;
    }
  }
  if (end == text.size()) return text;
  return text.substr(0, end) + "。";
}

struct Normalized {
  std::string text;
  bool chinese = false;
};

// frontend.py:136-156 up to split_paragraph, without ttsfrd or wetext.
Normalized NormalizeText(std::string_view utf8) {
  Normalized out;
  out.text = std::string(PythonStrip(utf8));
  out.chinese = ContainsChinese(out.text);
  if (out.chinese) {
    // Upstream would run wetext's zh TN here (digits, dates, units to Chinese words); without
    // it digits stay Arabic digits, exactly as upstream without wetext leaves them, and the
    // LLM reads them as it can.
    std::string text = absl::StrReplaceAll(out.text, {{"\n", ""}});
    text = ReplaceBlank(text);
    text = ReplaceCornerMark(text);
    text = absl::StrReplaceAll(text, {{".", "。"}});
    text = absl::StrReplaceAll(text, {{" - ", "，"}});
    text = RemoveBracket(text);
    out.text = FinalCommasToFullStop(std::move(text));
  } else {
    // Upstream would run wetext's en TN first; without it only the numbers are spelled out.
    out.text = SpellOutNumber(out.text);
  }
  return out;
}

bool SkipsFrontend(std::string_view utf8, bool text_frontend) {
  // frontend.py:132-135: SSML-like markers ("<|...|>") turn the frontend off.
  return !text_frontend ||
         (utf8.find("<|") != std::string_view::npos && utf8.find("|>") != std::string_view::npos);
}

// Where FitToTokens may cut: after these (clause and sentence punctuation, ASCII and
// full-width), after white space, or between any two characters.
bool EndsClause(char32_t c) {
  switch (c) {
    case U',':
    case U';':
    case U':':
    case U'.':
    case U'!':
    case U'?':
    case U'，':
    case U'、':
    case U'；':
    case U'：':
    case U'。':
    case U'！':
    case U'？':
      return true;
    default:
      return false;
  }
}

// `text` cut after every code point for which `cut_after` holds (a run of them stays with the
// unit it ends: "Wait..." or "a  "), so that the units joined are `text` again.
template <typename CutAfter>
std::vector<std::string_view> CutText(std::string_view text, CutAfter cut_after) {
  std::vector<std::string_view> units;
  std::size_t start = 0, at = 0;
  while (at < text.size()) {
    const char32_t c = CodePointAt(text, at);
    at += SequenceLength(static_cast<unsigned char>(text[at]));
    const bool next_also = at < text.size() && cut_after(CodePointAt(text, at));
    if (cut_after(c) && !next_also) {
      units.push_back(text.substr(start, at - start));
      start = at;
    }
  }
  if (start < text.size()) units.push_back(text.substr(start));
  return units;
}

std::vector<std::string_view> CutAtLevel(std::string_view text, int level) {
  switch (level) {
    case 0:
      return CutText(text, EndsClause);
    case 1:
      return CutText(text, IsPythonSpace);
    default: {
      std::vector<std::string_view> characters;
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t length = SequenceLength(static_cast<unsigned char>(text[at]));
        characters.push_back(text.substr(at, length));
        at += length;
      }
      return characters;
    }
  }
}

}  // namespace

TextFrontend::TextFrontend(const text::Qwen2Tokenizer* tokenizer, SplitLimits limits)
    : tokenizer_(tokenizer), limits_(limits) {}

absl::StatusOr<std::unique_ptr<TextFrontend>> TextFrontend::Create(
    const text::Qwen2Tokenizer* tokenizer, SplitLimits limits) {
  if (tokenizer == nullptr) return core::InvalidArgument("the text frontend needs a tokenizer");
  if (limits.token_min_n < 0 || limits.token_max_n < limits.token_min_n || limits.merge_len < 0) {
    return core::InvalidArgument(
        "split limits need 0 <= token_min_n <= token_max_n and merge_len >= 0");
  }
  return std::unique_ptr<TextFrontend>(new TextFrontend(tokenizer, limits));
}

absl::StatusOr<std::vector<std::string>> TextFrontend::Normalize(std::string_view utf8,
                                                                 bool text_frontend) const {
  if (absl::Status valid = text::ValidateUtf8(utf8, "text"); !valid.ok()) return valid;
  if (SkipsFrontend(utf8, text_frontend) || utf8.empty()) return std::vector{std::string(utf8)};
  const Normalized normalized = NormalizeText(utf8);
  std::vector<std::string> pieces =
      SplitParagraph(normalized.text, *tokenizer_, normalized.chinese, limits_);
  std::erase_if(pieces, [](const std::string& piece) { return IsOnlyPunctuation(piece); });
  return pieces;
}

size_t TextFrontend::Tokens(std::string_view text) const {
  auto ids = tokenizer_->Encode(text);
  return ids.ok() ? ids->size() : text.size();  // pieces are valid UTF-8: Encode does not fail
}

void TextFrontend::Fit(std::string_view text, size_t max_tokens, int level,
                       std::vector<std::string>& out) const {
  if (level > 2 || Tokens(text) <= max_tokens) {
    out.emplace_back(text);
    return;
  }
  const std::vector<std::string_view> units = CutAtLevel(text, level);
  if (units.size() <= 1) return Fit(text, max_tokens, level + 1, out);
  std::string current;
  for (std::string_view unit : units) {
    std::string joined = current + std::string(unit);
    if (!current.empty() && Tokens(joined) <= max_tokens) {
      current = std::move(joined);
      continue;
    }
    if (!current.empty()) out.push_back(std::move(current));
    current.clear();
    if (Tokens(unit) <= max_tokens) {
      current = std::string(unit);
    } else {
      Fit(unit, max_tokens, level + 1, out);
    }
  }
  if (!current.empty()) out.push_back(std::move(current));
}

std::vector<std::string> TextFrontend::FitToTokens(std::string_view piece,
                                                   size_t max_tokens) const {
  std::vector<std::string> parts;
  Fit(piece, std::max<size_t>(max_tokens, 1), 0, parts);
  std::vector<std::string> kept;
  for (const std::string& part : parts) {
    std::string_view stripped = PythonStrip(part);
    if (!stripped.empty() && !IsOnlyPunctuation(stripped)) kept.emplace_back(stripped);
  }
  return kept;
}

absl::StatusOr<std::string> TextFrontend::NormalizeWhole(std::string_view utf8,
                                                         bool text_frontend) const {
  if (absl::Status valid = text::ValidateUtf8(utf8, "text"); !valid.ok()) return valid;
  if (SkipsFrontend(utf8, text_frontend) || utf8.empty()) return std::string(utf8);
  return NormalizeText(utf8).text;
}

}  // namespace voxserve::engine::cosyvoice
