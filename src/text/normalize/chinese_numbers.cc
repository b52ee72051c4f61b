#include "text/normalize/chinese_numbers.h"

#include <array>
#include <vector>

namespace voxserve::text::normalize {
namespace {

constexpr std::array<std::string_view, 10> kDigits = {"零", "一", "二", "三", "四",
                                                      "五", "六", "七", "八", "九"};
constexpr std::array<std::string_view, 4> kPlaces = {"", "十", "百", "千"};
constexpr std::array<std::string_view, 4> kGroups = {"", "万", "亿", "万亿"};

// One group of four digits (1..9999). `leading`: the number's first group, where 10..19 drop
// their 一 and no 零 comes before.
std::string Group(unsigned value, bool leading) {
  std::string out;
  bool zero_pending = false;
  bool started = false;
  for (int place = 3; place >= 0; --place) {
    unsigned divisor = 1;
    for (int i = 0; i < place; ++i) divisor *= 10;
    const unsigned digit = value / divisor % 10;
    if (digit == 0) {
      if (started) zero_pending = true;
      continue;
    }
    if (zero_pending) out += "零";
    zero_pending = false;
    if (!(leading && !started && place == 1 && digit == 1)) out += kDigits[digit];
    out += kPlaces[static_cast<size_t>(place)];
    started = true;
  }
  return out;
}

}  // namespace

std::string ChineseCardinal(uint64_t value) {
  if (value == 0) return "零";
  std::vector<unsigned> groups;  // least significant first
  for (uint64_t rest = value; rest > 0; rest /= 10000) groups.push_back(rest % 10000);
  std::string out;
  bool zero_pending = false;
  for (size_t index = groups.size(); index-- > 0;) {
    const unsigned group = groups[index];
    const bool leading = out.empty();
    if (group == 0) {
      zero_pending = !leading;
      continue;
    }
    // A gap before this group (a group of zeros, or fewer than four digits in it) is one 零.
    if (!leading && (zero_pending || group < 1000)) out += "零";
    zero_pending = false;
    out += Group(group, leading);
    out += kGroups[index];
  }
  return out;
}

std::string ChineseDigits(std::string_view digits) {
  std::string out;
  for (char digit : digits) out += kDigits[static_cast<unsigned>(digit - '0')];
  return out;
}

}  // namespace voxserve::text::normalize
