#include "engine/onnx/code_points.h"

#include <unicode/normalizer2.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

namespace voxserve::engine::onnx {

std::u32string DecodeUtf8(std::string_view utf8) {
  std::u32string out;
  out.reserve(utf8.size());
  int32_t i = 0;
  const auto* s = reinterpret_cast<const uint8_t*>(utf8.data());
  const auto length = static_cast<int32_t>(utf8.size());
  while (i < length) {
    UChar32 c = 0;
    U8_NEXT(s, i, length, c);
    out += c < 0 ? U'\uFFFD' : static_cast<char32_t>(c);
  }
  return out;
}

std::string EncodeUtf8(std::u32string_view code_points) {
  std::string out;
  for (char32_t c : code_points) {
    uint8_t buffer[4];
    int32_t n = 0;
    UBool error = false;
    U8_APPEND(buffer, n, 4, static_cast<UChar32>(c), error);
    if (!error) out.append(reinterpret_cast<const char*>(buffer), static_cast<size_t>(n));
  }
  return out;
}

std::u32string NfdCodePoints(std::string_view utf8) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* nfd = icu::Normalizer2::getNFDInstance(status);
  if (U_FAILURE(status)) return DecodeUtf8(utf8);  // ICU data missing: undecomposed is close
  icu::UnicodeString decomposed =
      nfd->normalize(icu::UnicodeString::fromUTF8(
                         icu::StringPiece(utf8.data(), static_cast<int32_t>(utf8.size()))),
                     status);
  if (U_FAILURE(status)) return DecodeUtf8(utf8);
  std::string out;
  decomposed.toUTF8String(out);
  return DecodeUtf8(out);
}

}  // namespace voxserve::engine::onnx
