// UTF-8 ↔ code points and NFD, for phoneme strings (one phoneme symbol = one code point).
#pragma once

#include <string>
#include <string_view>

namespace voxserve::engine::onnx {

// Invalid sequences become U+FFFD.
std::u32string DecodeUtf8(std::string_view utf8);
std::string EncodeUtf8(std::u32string_view code_points);
// Canonical decomposition (ICU's NFD), e.g. "ç" → "c" + U+0327, as Piper does before mapping.
std::u32string NfdCodePoints(std::string_view utf8);

}  // namespace voxserve::engine::onnx
