// CosyVoice's text normalization and splitting (upstream cosyvoice/cli/frontend.py
// text_normalize, lines 127-160, with cosyvoice/utils/frontend_utils.py), as upstream runs it
// without ttsfrd or WeTextProcessing/wetext, neither of which exists here: no TN model; the
// zh path applies upstream's symbol rules, the en path spells numbers out as inflect does.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "text/bpe_tokenizer.h"

namespace voxserve::engine::cosyvoice {

// split_paragraph's limits as text_normalize passes them (frontend.py:149,155), in tokens of
// the tokenizer for English and in characters for Chinese.
struct SplitLimits {
  int token_max_n = 80;
  int token_min_n = 60;
  int merge_len = 20;
};

// Immutable; safe cross thread. Holds the tokenizer it measures English pieces with (owned by
// the caller, who keeps it alive as long as this frontend).
class TextFrontend {
 public:
  static absl::StatusOr<std::unique_ptr<TextFrontend>> Create(const text::Qwen2Tokenizer* tokenizer,
                                                              SplitLimits limits = {});

  // text_normalize(text, split=True, text_frontend): the pieces to synthesize one by one.
  // Text holding both "<|" and "|>" (or text_frontend = false) comes back whole and untouched,
  // as upstream does. InvalidArgument when `utf8` is not valid UTF-8. Text that is empty after
  // stripping gives no pieces (upstream raises IndexError in split_paragraph there).
  absl::StatusOr<std::vector<std::string>> Normalize(std::string_view utf8,
                                                     bool text_frontend = true) const;

  // One of Normalize's pieces cut further so that each part has at most `max_tokens` tokens
  // (what the LLM's KV cache leaves for a piece's text: LlmDecoder::MaxTextTokens): at clause
  // punctuation first, then between words, then between characters (Chinese has no spaces),
  // neighbours merged back while they fit. Upstream's splitter knows no such budget; a piece
  // that fits comes back whole. Parts are stripped; those of only punctuation are dropped. A
  // part of one character may still be longer (a budget below one character's tokens).
  std::vector<std::string> FitToTokens(std::string_view piece, size_t max_tokens) const;

  // text_normalize(text, split=False, ...): the normalized text in one piece (upstream uses this
  // for a zero-shot prompt's transcript).
  absl::StatusOr<std::string> NormalizeWhole(std::string_view utf8,
                                             bool text_frontend = true) const;

 private:
  TextFrontend(const text::Qwen2Tokenizer* tokenizer, SplitLimits limits);
  size_t Tokens(std::string_view text) const;
  // FitToTokens at one level of cutting (0 clauses, 1 words, 2 characters) and below.
  void Fit(std::string_view text, size_t max_tokens, int level,
           std::vector<std::string>& out) const;
  const text::Qwen2Tokenizer* tokenizer_;
  SplitLimits limits_;
};

// The frontend_utils.py functions, on valid UTF-8, exposed so tests can hold each against
// upstream's. Text is handled as Python str: in code points.
namespace frontend_rules {

bool ContainsChinese(std::string_view utf8);      // a code point in U+4E00..U+9FFF
std::string ReplaceBlank(std::string_view utf8);  // drop spaces not between two ASCII non-spaces
std::string ReplaceCornerMark(std::string_view utf8);  // ² -> 平方, ³ -> 立方
std::string RemoveBracket(std::string_view utf8);      // （）【】` dropped, —— -> " "
bool IsOnlyPunctuation(std::string_view utf8);         // every code point \p{P} or \p{S} (or none)
// Each run of str.isdigit() code points replaced by inflect's number_to_words of it.
std::string SpellOutNumber(std::string_view utf8);
// inflect.engine().number_to_words(digits) for a string of str.isdigit() code points.
std::string NumberToWords(std::u32string_view digits);
// split_paragraph(text, tokenize, lang, ...) with comma_split=False; `tokenizer` measures
// English ("en") pieces, Chinese ("zh") ones are measured in code points.
std::vector<std::string> SplitParagraph(std::string_view utf8,
                                        const text::Qwen2Tokenizer& tokenizer, bool chinese,
                                        SplitLimits limits = {});

}  // namespace frontend_rules
}  // namespace voxserve::engine::cosyvoice
