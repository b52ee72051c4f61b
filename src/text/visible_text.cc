#include "text/visible_text.h"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <cstdint>
#include <cstdio>

namespace voxserve::text {
namespace {

bool IsInvisible(UChar32 c) {
  constexpr std::uint32_t kCategories = U_GC_CC_MASK | U_GC_CF_MASK | U_GC_CO_MASK | U_GC_CN_MASK |
                                        U_GC_CS_MASK | U_GC_ZL_MASK | U_GC_ZP_MASK;
  return (U_GET_GC_MASK(c) & kCategories) != 0 || u_hasBinaryProperty(c, UCHAR_BIDI_CONTROL) ||
         u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT);
}

}  // namespace

std::optional<InvisibleCharacter> FirstInvisibleCharacter(std::string_view valid_utf8) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(valid_utf8.data());
  std::size_t offset = 0;
  std::size_t index = 0;
  while (offset < valid_utf8.size()) {
    UChar32 c;
    U8_NEXT(bytes, offset, valid_utf8.size(), c);
    if (c < 0 || IsInvisible(c)) {
      return InvisibleCharacter{static_cast<char32_t>(c < 0 ? 0xFFFD : c), index};
    }
    ++index;
  }
  return std::nullopt;
}

std::string UnspeakableTextProblem(std::string_view valid_utf8) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(valid_utf8.data());
  std::size_t offset = 0;
  bool visible = false;
  while (offset < valid_utf8.size()) {
    UChar32 c;
    U8_NEXT(bytes, offset, valid_utf8.size(), c);
    if (c < 0) return "is not valid UTF-8";
    if (u_charType(c) == U_CONTROL_CHAR) {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
      return std::string("holds a control character (") + code + ")";
    }
    if (!IsInvisible(c) && !u_isUWhiteSpace(c)) visible = true;
  }
  return visible ? std::string() : "shows nothing (only invisible characters or spaces)";
}

std::string LookAlikeKey(std::string_view valid_utf8) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* fold = icu::Normalizer2::getNFKCCasefoldInstance(status);
  if (U_FAILURE(status)) return std::string(valid_utf8);
  icu::UnicodeString folded =
      fold->normalize(icu::UnicodeString::fromUTF8(icu::StringPiece(
                          valid_utf8.data(), static_cast<int32_t>(valid_utf8.size()))),
                      status);
  if (U_FAILURE(status)) return std::string(valid_utf8);
  std::string key;
  folded.toUTF8String(key);
  return key;
}

}  // namespace voxserve::text
