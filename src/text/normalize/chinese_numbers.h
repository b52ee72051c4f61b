// Chinese number words (Mandarin, simplified characters): 一万二千三百四十五, 一千零五, 十五, 两.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace voxserve::text::normalize {

// 0 .. 9,999,999,999,999,999 (万, 亿, 万亿). 10..19 at the head drop their 一: 十五, 十万; inside a
// number they keep it: 一百一十.
std::string ChineseCardinal(uint64_t value);
// Each digit's name: "2026" → 二零二六.
std::string ChineseDigits(std::string_view digits);

inline constexpr uint64_t kMaxChineseCardinal = 9'999'999'999'999'999ull;

}  // namespace voxserve::text::normalize
