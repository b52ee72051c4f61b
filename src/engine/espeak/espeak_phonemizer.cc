#include "engine/espeak/espeak_phonemizer.h"

#include <espeak-ng/speak_lib.h>
#include <strings.h>

#include <cstring>

#include "core/error.h"

namespace voxserve::engine {
namespace {

// Start of the UTF-8 code point that ends just before byte `pos` (pos > 0).
size_t PreviousCodePoint(std::string_view text, size_t pos) {
  do {
    --pos;
  } while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80);
  return pos;
}

char32_t DecodeAt(std::string_view text, size_t pos) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(pos);
  if (lead < 0x80) return lead;
  int extra = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1;
  char32_t cp = lead & (0x3F >> extra);
  for (int i = 1; i <= extra && pos + i < text.size(); ++i) cp = (cp << 6) | (byte(pos + i) & 0x3F);
  return cp;
}

bool OneOf(char32_t c, std::u32string_view set) { return set.find(c) != std::u32string_view::npos; }

// White space and the closing quotes and brackets that may follow a clause's punctuation.
bool IsSkippedBeforeTerminator(char32_t c) {
  return OneOf(c, U" \t\n\r\u00A0\u3000\"')]}\u00BB\u201D\u2019\u300D\u300F\uFF09\u3011");
}

// ASCII, CJK full-width, Arabic and Devanagari clause punctuation; an ellipsis ends a sentence
// as "..." does.
ClauseEnd ClauseEndOf(char32_t c) {
  if (OneOf(c, U".\u3002\uFF0E\u2026\u0964")) return ClauseEnd::kPeriod;
  if (OneOf(c, U"?\uFF1F\u061F")) return ClauseEnd::kQuestion;
  if (OneOf(c, U"!\uFF01")) return ClauseEnd::kExclamation;
  if (OneOf(c, U",\uFF0C\u3001\u060C")) return ClauseEnd::kComma;
  if (OneOf(c, U":\uFF1A")) return ClauseEnd::kColon;
  if (OneOf(c, U";\uFF1B")) return ClauseEnd::kSemicolon;
  return ClauseEnd::kNone;
}

}  // namespace

bool EndsSentence(ClauseEnd end) {
  return end == ClauseEnd::kPeriod || end == ClauseEnd::kQuestion || end == ClauseEnd::kExclamation;
}

std::string_view PunctuationFor(ClauseEnd end) {
  switch (end) {
    case ClauseEnd::kPeriod:
      return ".";
    case ClauseEnd::kQuestion:
      return "?";
    case ClauseEnd::kExclamation:
      return "!";
    case ClauseEnd::kComma:
      return ",";
    case ClauseEnd::kColon:
      return ":";
    case ClauseEnd::kSemicolon:
      return ";";
    case ClauseEnd::kNone:
      break;
  }
  return "";
}

ClauseEnd ClauseEndBefore(std::string_view text, size_t clause_end) {
  size_t pos = std::min(clause_end, text.size());
  while (pos > 0) {
    pos = PreviousCodePoint(text, pos);
    char32_t c = DecodeAt(text, pos);
    if (!IsSkippedBeforeTerminator(c)) return ClauseEndOf(c);
  }
  return ClauseEnd::kNone;
}

std::string RemoveLanguageFlags(std::string_view phonemes) {
  std::string out;
  out.reserve(phonemes.size());
  bool in_flag = false;
  for (char c : phonemes) {
    if (in_flag) {
      in_flag = c != ')';
    } else if (c == '(') {
      in_flag = true;
    } else {
      out += c;
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<EspeakPhonemizer>> EspeakPhonemizer::Create(
    const std::string& data_path) {
  auto library = EspeakLibrary::Acquire(data_path);
  if (!library.ok()) return library.status();
  return std::unique_ptr<EspeakPhonemizer>(new EspeakPhonemizer(*library));
}

absl::Status EspeakPhonemizer::SelectVoice(const std::string& voice) const {
  auto known = resolved_.find(voice);
  if (known == resolved_.end()) {
    // espeak_SetVoiceByName matches voice names and file names ("en-us" is the file gmw/en-US)
    // but not every language: "en-gb" lives in the file gmw/en. Like `espeak-ng -v`, fall
    // back to the voice that lists the language, with the best (lowest) priority.
    std::string target;
    if (espeak_SetVoiceByName(voice.c_str()) == EE_OK) {
      target = voice;
    } else {
      int best = 256;
      for (const espeak_VOICE** v = espeak_ListVoices(nullptr); *v != nullptr; ++v) {
        // languages: {priority byte, name, NUL} repeated, ended by a zero priority byte.
        for (const char* lang = (*v)->languages; *lang != 0; lang += std::strlen(lang + 1) + 2) {
          if (strcasecmp(lang + 1, voice.c_str()) == 0 && *lang < best) {
            best = *lang;
            target = (*v)->identifier;
          }
        }
      }
    }
    if (target.empty()) {
      return core::InvalidArgument("espeak-ng has no voice '" + voice +
                                   "' (espeak-ng --voices lists them)");
    }
    known = resolved_.emplace(voice, target).first;
  }
  if (espeak_SetVoiceByName(known->second.c_str()) != EE_OK) {
    return core::Internal("espeak-ng could not select voice '" + voice + "'");
  }
  return absl::OkStatus();
}

absl::Status EspeakPhonemizer::CheckVoice(const std::string& voice) const {
  auto lock = library_->Lock();
  return SelectVoice(voice);
}

absl::StatusOr<std::vector<PhonemizedClause>> EspeakPhonemizer::Phonemize(
    std::string_view text, const std::string& voice) const {
  std::vector<PhonemizedClause> clauses;
  const std::string buffer(text);  // espeak reads a NUL-terminated string
  auto lock = library_->Lock();
  if (absl::Status status = SelectVoice(voice); !status.ok()) return status;
  // Debian's espeak-ng 1.51 has only espeak_TextToPhonemes, which drops the punctuation that
  // ended the clause (espeak_TextToPhonemesWithTerminator, which returns it, came later). Each
  // call translates one clause and moves the text pointer past it plus exactly one code point
  // of look-ahead (the first character of the next clause, which espeak keeps in its own state
  // and prepends to the next call; checked on en-us, de and cmn text). So the clause's text ends
  // one code point before the new pointer (or at the end of the text once the pointer is NULL),
  // and its terminator is the last character there that is not space or a closing quote — the
  // same recovery rhasspy's piper-phonemize used before the terminator call existed.
  const void* pointer = buffer.c_str();
  while (pointer != nullptr) {
    const char* phonemes = espeak_TextToPhonemes(&pointer, espeakCHARS_UTF8, espeakPHONEMES_IPA);
    size_t clause_end = buffer.size();
    if (pointer != nullptr) {
      size_t next = static_cast<size_t>(static_cast<const char*>(pointer) - buffer.c_str());
      clause_end = next > 0 ? PreviousCodePoint(buffer, next) : 0;
    }
    PhonemizedClause clause;
    clause.phonemes = phonemes != nullptr ? phonemes : "";  // espeak's buffer: copy it now
    clause.end = ClauseEndBefore(buffer, clause_end);
    clauses.push_back(std::move(clause));
  }
  return clauses;
}

}  // namespace voxserve::engine
