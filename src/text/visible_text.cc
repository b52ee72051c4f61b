#include "text/visible_text.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <cstdint>

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

}  // namespace voxserve::text
