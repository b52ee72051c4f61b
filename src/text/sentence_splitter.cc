#include "text/sentence_splitter.h"

#include <unicode/brkiter.h>
#include <unicode/filteredbrk.h>
#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/utext.h>
#include <unicode/utf8.h>

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_format.h"
#include "core/error.h"
#include "text/utf8.h"

namespace voxserve::text {
namespace {

// Titles that ICU's English suppression list leaves out on purpose ("Dr." may be "Drive", "St."
// "Street" at the end of a sentence). For speech, a false split before a name ("Dr." spoken as
// a whole sentence, then "Smith ...") sounds worse than joining two sentences after an address.
constexpr const char* kEnglishTitles[] = {"Dr.", "St.", "Jr.", "Sr."};

absl::StatusOr<icu::Locale> ParseLocale(std::string_view id) {
  const std::string name(id);
  UErrorCode status = U_ZERO_ERROR;
  icu::Locale locale = icu::Locale::forLanguageTag(name, status);
  if (U_FAILURE(status) || locale.isBogus()) locale = icu::Locale(name.c_str());  // an ICU id
  if (locale.isBogus()) {
    return core::InvalidArgument(
        absl::StrFormat("'%s' is not a locale id, e.g. \"en\" or \"zh\"", id));
  }
  return locale;
}

// The locale's abbreviations after which a full stop ends no sentence: the list ICU's
// "ss=standard" keyword uses (for English: Mr., Mrs., Prof., Capt., ...), plus kEnglishTitles.
absl::StatusOr<std::unique_ptr<icu::FilteredBreakIteratorBuilder>> LoadAbbreviations(
    const icu::Locale& locale) {
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::FilteredBreakIteratorBuilder> abbreviations(
      icu::FilteredBreakIteratorBuilder::createInstance(locale, status));
  if (status == U_MISSING_RESOURCE_ERROR || status == U_USING_DEFAULT_WARNING) {
    // No list of its own (zh, ja, root, unknown ids). ICU would then borrow the list of the
    // process's default locale; none keeps the result independent of the host's LANG.
    status = U_ZERO_ERROR;
    abbreviations.reset(icu::FilteredBreakIteratorBuilder::createEmptyInstance(status));
  }
  if (U_SUCCESS(status) && std::string_view(locale.getLanguage()) == "en") {
    for (const char* title : kEnglishTitles) {
      abbreviations->suppressBreakAfter(icu::UnicodeString::fromUTF8(title), status);
    }
  }
  if (U_FAILURE(status)) {
    return core::Internal(absl::StrFormat("ICU abbreviation list for '%s' failed to load: %s",
                                          locale.getName(), u_errorName(status)));
  }
  return abbreviations;
}

absl::StatusOr<std::unique_ptr<icu::BreakIterator>> CreateSentenceIterator(
    const icu::Locale& locale) {
  absl::StatusOr<std::unique_ptr<icu::FilteredBreakIteratorBuilder>> abbreviations =
      LoadAbbreviations(locale);
  if (!abbreviations.ok()) return abbreviations.status();
  UErrorCode status = U_ZERO_ERROR;
  icu::BreakIterator* rules = icu::BreakIterator::createSentenceInstance(locale, status);
  // Takes ownership of `rules`, also when it fails.
  std::unique_ptr<icu::BreakIterator> filtered(
      (*abbreviations)->wrapIteratorWithFilter(rules, status));
  if (U_FAILURE(status) || filtered == nullptr) {
    return core::Internal(absl::StrFormat("ICU sentence rules for '%s' failed to load: %s",
                                          locale.getName(), u_errorName(status)));
  }
  return filtered;
}

struct UTextCloser {
  void operator()(UText* text) const { utext_close(text); }
};

// Byte ranges of ICU's sentences in `utf8`, untrimmed. A copy of `prototype` does the work, so
// concurrent calls never share iterator state. Should ICU fail (out of memory, or text over the
// int32 offsets BreakIterator reports), the whole text is one sentence: nothing is lost.
std::vector<std::string_view> IcuSentences(const icu::BreakIterator& prototype,
                                           std::string_view utf8) {
  std::vector<std::string_view> sentences;
  if (utf8.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    return {utf8};
  }
  UErrorCode status = U_ZERO_ERROR;
  // UTF-8 UText: no UTF-16 copy, and boundaries come back as UTF-8 byte offsets.
  std::unique_ptr<UText, UTextCloser> text(
      utext_openUTF8(nullptr, utf8.data(), static_cast<std::int64_t>(utf8.size()), &status));
  std::unique_ptr<icu::BreakIterator> iterator(prototype.clone());
  if (U_FAILURE(status) || iterator == nullptr) return {utf8};
  iterator->setText(text.get(), status);
  if (U_FAILURE(status)) return {utf8};
  std::int32_t begin = iterator->first();
  for (std::int32_t end = iterator->next(); end != icu::BreakIterator::DONE;
       end = iterator->next()) {
    sentences.push_back(
        utf8.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin)));
    begin = end;
  }
  return sentences;
}

bool IsAsciiDigit(std::uint8_t byte) { return byte >= '0' && byte <= '9'; }

// Marks after which a clause ends, in Latin, CJK and Arabic text.
bool IsClauseMark(UChar32 c) {
  switch (c) {
    case u',':
    case u';':
    case u':':
    case u'\u2013':  // – en dash
    case u'\u2014':  // — em dash
    case u'\u060C':  // ، Arabic comma
    case u'\u061B':  // ؛ Arabic semicolon
    case u'\u3001':  // 、 ideographic comma
    case u'\uFE50':  // ﹐ small forms
    case u'\uFE51':
    case u'\uFE54':
    case u'\uFE55':
    case u'\uFF0C':  // ， fullwidth
    case u'\uFF1A':
    case u'\uFF1B':
    case u'\uFF64':  // ､ halfwidth ideographic comma
      return true;
    default:
      return false;
  }
}

// White_Space except the no-break spaces, which join what they separate ("10 kg", "M. Dupont").
bool IsBreakableSpace(UChar32 c) {
  return c != u'\u00A0' && c != u'\u2007' && c != u'\u202F' && u_isUWhiteSpace(c);
}

}  // namespace

// Right at the limit is always a code point boundary.
std::size_t ClauseCutLength(std::string_view sentence, std::size_t max_chars) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(sentence.data());
  std::size_t offset = 0;
  std::size_t after_clause_mark = 0;
  std::size_t before_space = 0;
  for (std::size_t chars = 0; chars < max_chars && offset < sentence.size(); ++chars) {
    const std::size_t start = offset;
    UChar32 c;
    U8_NEXT(bytes, offset, sentence.size(), c);
    // A mark followed by a digit is inside a number ("1,000", "3:45", "1990–2000").
    const bool digit_follows = offset < sentence.size() && IsAsciiDigit(bytes[offset]);
    if (IsClauseMark(c) && !digit_follows) {
      after_clause_mark = offset;
    } else if (IsBreakableSpace(c)) {
      before_space = start;
    }
  }
  if (offset == sentence.size()) return offset;  // fits
  std::size_t next = offset;
  UChar32 c;
  U8_NEXT(bytes, next, sentence.size(), c);
  if (IsBreakableSpace(c)) before_space = offset;  // a space right at the limit is a clean cut
  if (after_clause_mark > 0) return after_clause_mark;
  if (before_space > 0) return before_space;
  return offset;
}

namespace {

void AppendWithinLimit(std::string_view sentence, std::size_t max_chars,
                       std::vector<std::string>& sentences) {
  sentence = TrimWhitespace(sentence);
  while (!sentence.empty()) {
    const std::size_t length =
        max_chars == 0 ? sentence.size() : ClauseCutLength(sentence, max_chars);
    sentences.emplace_back(TrimWhitespace(sentence.substr(0, length)));
    sentence = TrimWhitespace(sentence.substr(length));
  }
}

}  // namespace

struct SentenceSplitter::Impl {
  std::unique_ptr<icu::BreakIterator> prototype;  // never iterated; only cloned
};

absl::StatusOr<std::unique_ptr<SentenceSplitter>> SentenceSplitter::Create(
    std::string_view locale) {
  absl::StatusOr<icu::Locale> parsed = ParseLocale(locale);
  if (!parsed.ok()) return parsed.status();
  absl::StatusOr<std::unique_ptr<icu::BreakIterator>> iterator = CreateSentenceIterator(*parsed);
  if (!iterator.ok()) return iterator.status();
  auto impl = std::make_unique<Impl>();
  impl->prototype = *std::move(iterator);
  return std::unique_ptr<SentenceSplitter>(new SentenceSplitter(std::move(impl)));
}

SentenceSplitter::SentenceSplitter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SentenceSplitter::~SentenceSplitter() = default;

std::vector<std::string> SentenceSplitter::Split(std::string_view utf8,
                                                 std::size_t max_chars) const {
  std::vector<std::string> sentences;
  for (std::string_view sentence : IcuSentences(*impl_->prototype, utf8)) {
    AppendWithinLimit(sentence, max_chars, sentences);
  }
  return sentences;
}

std::vector<std::string_view> SentenceSplitter::Spans(std::string_view utf8) const {
  return IcuSentences(*impl_->prototype, utf8);
}

}  // namespace voxserve::text
