#include "text/utf8.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <cstdint>

#include "absl/strings/str_format.h"
#include "core/error.h"

namespace voxserve::text {
namespace {

const std::uint8_t* Bytes(std::string_view text) {
  return reinterpret_cast<const std::uint8_t*>(text.data());
}

}  // namespace

absl::Status ValidateUtf8(std::string_view text, std::string_view param) {
  const std::uint8_t* bytes = Bytes(text);
  std::size_t offset = 0;
  while (offset < text.size()) {
    const std::size_t start = offset;
    UChar32 c;
    // ICU's U8_NEXT follows the Unicode standard's well-formedness table: it returns a negative
    // value for overlongs, surrogates, code points above U+10FFFF and truncated sequences.
    U8_NEXT(bytes, offset, text.size(), c);
    if (c < 0) {
      return core::InvalidArgument(
          absl::StrFormat("'%s' is not valid UTF-8: bad byte sequence at byte offset %d", param,
                          start),
          param, "invalid_utf8");
    }
  }
  return absl::OkStatus();
}

std::size_t CountCodePoints(std::string_view valid_utf8) {
  std::size_t count = 0;
  for (char byte : valid_utf8) {
    if (!U8_IS_TRAIL(static_cast<std::uint8_t>(byte))) ++count;
  }
  return count;
}

std::string_view TrimWhitespace(std::string_view utf8) {
  // One forward pass: ICU's U8_PREV takes int32_t offsets, and text here is short anyway.
  const std::uint8_t* bytes = Bytes(utf8);
  std::size_t begin = utf8.size();
  std::size_t end = 0;
  std::size_t offset = 0;
  while (offset < utf8.size()) {
    const std::size_t start = offset;
    UChar32 c;
    U8_NEXT(bytes, offset, utf8.size(), c);
    if (c >= 0 && u_isUWhiteSpace(c)) continue;
    if (begin == utf8.size()) begin = start;
    end = offset;
  }
  return begin < end ? utf8.substr(begin, end - begin) : std::string_view();
}

}  // namespace voxserve::text
