#include "text/text_accumulator.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <cstdint>

#include "core/error.h"
#include "text/utf8.h"

namespace voxserve::text {
namespace {

// Length of the trailing bytes of `bytes` that begin a well-formed UTF-8 sequence but stop
// before its end (0 when the text ends on a whole character or with bytes that are wrong anyway,
// which ValidateUtf8 then reports). Ranges from the Unicode standard, table 3-7.
std::size_t IncompleteSequenceTail(std::string_view bytes) {
  const std::size_t size = bytes.size();
  for (std::size_t back = 1; back <= 3 && back <= size; ++back) {
    const auto lead = static_cast<std::uint8_t>(bytes[size - back]);
    if (U8_IS_TRAIL(lead)) continue;
    std::size_t needed = 0;
    if (lead >= 0xC2 && lead <= 0xDF) {
      needed = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      needed = 3;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      needed = 4;
    }
    if (needed <= back) return 0;  // ASCII, a whole sequence, or a byte that never leads one
    if (back >= 2) {
      const auto second = static_cast<std::uint8_t>(bytes[size - back + 1]);
      std::uint8_t low = 0x80;
      std::uint8_t high = 0xBF;
      if (lead == 0xE0) low = 0xA0;   // no overlongs
      if (lead == 0xED) high = 0x9F;  // no surrogates
      if (lead == 0xF0) low = 0x90;   // no overlongs
      if (lead == 0xF4) high = 0x8F;  // nothing above U+10FFFF
      if (second < low || second > high) return 0;
    }
    return back;
  }
  return 0;
}

// Byte offset where the last letter (Unicode Alphabetic: Latin, CJK ideographs, kana, ...) of
// `utf8` starts, or npos without one.
std::size_t LastLetterOffset(std::string_view utf8) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(utf8.data());
  std::size_t last = std::string_view::npos;
  std::size_t offset = 0;
  while (offset < utf8.size()) {
    const std::size_t start = offset;
    UChar32 c;
    U8_NEXT(bytes, offset, utf8.size(), c);
    if (c >= 0 && u_isalpha(c)) last = start;
  }
  return last;
}

// `text` trimmed, in pieces of at most `max_chars` code points (as SentenceSplitter::Split cuts).
void AppendCut(std::string_view text, std::size_t max_chars, std::vector<std::string>& out) {
  text = TrimWhitespace(text);
  while (!text.empty()) {
    const std::size_t length = ClauseCutLength(text, max_chars);
    out.emplace_back(TrimWhitespace(text.substr(0, length)));
    text = TrimWhitespace(text.substr(length));
  }
}

}  // namespace

TextAccumulator::TextAccumulator(const SentenceSplitter& splitter, std::size_t max_pending_chars)
    : splitter_(splitter), max_pending_chars_(max_pending_chars > 0 ? max_pending_chars : 1) {}

absl::StatusOr<std::vector<std::string>> TextAccumulator::Append(std::string_view piece) {
  std::string bytes = partial_;
  bytes.append(piece);
  const std::size_t tail = IncompleteSequenceTail(bytes);
  std::string_view whole(bytes.data(), bytes.size() - tail);
  if (absl::Status status = ValidateUtf8(whole, "text"); !status.ok()) return status;
  pending_.append(whole);
  partial_ = bytes.substr(bytes.size() - tail);

  std::vector<std::string> sentences;
  TakeFinalSentences(sentences);
  CutOversizedPending(sentences);
  return sentences;
}

absl::StatusOr<std::vector<std::string>> TextAccumulator::Flush() {
  if (!partial_.empty()) {
    return core::InvalidArgument("text ends inside a UTF-8 sequence", "text", "invalid_utf8");
  }
  std::vector<std::string> sentences = splitter_.Split(pending_, max_pending_chars_);
  pending_.clear();
  return sentences;
}

void TextAccumulator::TakeFinalSentences(std::vector<std::string>& out) {
  const std::size_t last_letter = LastLetterOffset(pending_);
  if (last_letter == std::string_view::npos) return;
  std::size_t consumed = 0;
  for (std::string_view span : splitter_.Spans(pending_)) {
    const std::size_t end = consumed + span.size();
    if (end > last_letter) break;  // no letter after this boundary yet: it may still move
    AppendCut(span, max_pending_chars_, out);
    consumed = end;
  }
  pending_.erase(0, consumed);
}

void TextAccumulator::CutOversizedPending(std::vector<std::string>& out) {
  while (CountCodePoints(pending_) > max_pending_chars_) {
    std::string_view trimmed = TrimWhitespace(pending_);
    if (trimmed.empty()) {
      pending_.clear();
      return;
    }
    const std::size_t lead = static_cast<std::size_t>(trimmed.data() - pending_.data());
    const std::size_t length = ClauseCutLength(trimmed, max_pending_chars_);
    out.emplace_back(TrimWhitespace(trimmed.substr(0, length)));
    pending_.erase(0, lead + length);
  }
}

}  // namespace voxserve::text
