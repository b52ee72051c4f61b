#include "text/normalize/text_normalizer.h"

#include <unicode/uchar.h>
#include <unicode/uscript.h>
#include <unicode/utf8.h>

namespace voxserve::text::normalize {

NormalizationLanguage NormalizationLanguageForVoice(std::string_view language) {
  const std::string_view primary = language.substr(0, language.find_first_of("-_"));
  if (primary == "en") return NormalizationLanguage::kEnglish;
  if (primary == "zh" || primary == "cmn" || primary == "yue")
    return NormalizationLanguage::kChinese;
  return NormalizationLanguage::kNone;
}

NormalizationLanguage NormalizationLanguageOfText(std::string_view utf8) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(utf8.data());
  const int32_t length = static_cast<int32_t>(utf8.size());
  for (int32_t offset = 0; offset < length;) {
    UChar32 c;
    U8_NEXT(bytes, offset, length, c);
    if (c >= 0 && u_getIntPropertyValue(c, UCHAR_SCRIPT) == USCRIPT_HAN) {
      return NormalizationLanguage::kChinese;
    }
  }
  return NormalizationLanguage::kEnglish;
}

std::string NormalizeText(std::string_view utf8, NormalizationLanguage language) {
  switch (language) {
    case NormalizationLanguage::kEnglish:
      return NormalizeEnglish(utf8);
    case NormalizationLanguage::kChinese:
      return NormalizeChinese(utf8);
    case NormalizationLanguage::kNone:
      break;
  }
  return std::string(utf8);
}

}  // namespace voxserve::text::normalize
