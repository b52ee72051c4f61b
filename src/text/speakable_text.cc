#include "text/speakable_text.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <cstdint>

namespace voxserve::text {

std::string ControlCharactersAsSpaces(std::string_view valid_utf8) {
  std::string out(valid_utf8);
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(valid_utf8.data());
  std::size_t offset = 0;
  while (offset < valid_utf8.size()) {
    const std::size_t start = offset;
    UChar32 c;
    U8_NEXT(bytes, offset, valid_utf8.size(), c);
    if (c >= 0 && u_charType(c) == U_CONTROL_CHAR && !u_isUWhiteSpace(c)) {
      // C0 and DEL are one byte, C1 (U+0080..U+009F) two: a space each keeps the size and the
      // byte offsets of everything else.
      out.replace(start, offset - start, offset - start, ' ');
    }
  }
  return out;
}

bool HasSpeakableCharacters(std::string_view valid_utf8) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(valid_utf8.data());
  std::size_t offset = 0;
  while (offset < valid_utf8.size()) {
    UChar32 c;
    U8_NEXT(bytes, offset, valid_utf8.size(), c);
    if (c < 0) continue;
    const std::uint32_t category = U_GET_GC_MASK(c);
    if ((category & (U_GC_L_MASK | U_GC_N_MASK | U_GC_S_MASK)) != 0) return true;
  }
  return false;
}

}  // namespace voxserve::text
