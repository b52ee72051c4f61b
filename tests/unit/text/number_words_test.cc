// The number words of text/normalize against an independent implementation: ICU's rule-based
// number format (the CLDR spellout rules, Debian's libicu), for every number up to 100,000 and
// a spread of larger ones.
#include <gtest/gtest.h>
#include <unicode/locid.h>
#include <unicode/rbnf.h>
#include <unicode/unistr.h>

#include <memory>
#include <string>
#include <vector>

#include "text/normalize/chinese_numbers.h"
#include "text/normalize/english_numbers.h"

namespace voxserve::text::normalize {
namespace {

class Spellout {
 public:
  explicit Spellout(const char* locale) {
    UErrorCode status = U_ZERO_ERROR;
    format_ = std::make_unique<icu::RuleBasedNumberFormat>(icu::URBNF_SPELLOUT, icu::Locale(locale),
                                                           status);
    ok_ = U_SUCCESS(status);
  }
  bool ok() const { return ok_; }
  std::string Format(uint64_t value, const char* rule_set = nullptr) {
    UErrorCode status = U_ZERO_ERROR;
    if (rule_set != nullptr) format_->setDefaultRuleSet(icu::UnicodeString(rule_set), status);
    icu::UnicodeString out;
    format_->format(static_cast<int64_t>(value), out);
    std::string utf8;
    out.toUTF8String(utf8);
    return utf8;
  }

 private:
  std::unique_ptr<icu::RuleBasedNumberFormat> format_;
  bool ok_ = false;
};

std::vector<uint64_t> Values() {
  std::vector<uint64_t> values;
  for (uint64_t v = 0; v <= 100'000; ++v) values.push_back(v);
  for (uint64_t v = 100'001; v < 999'999'999'999'999ull; v = v * 7 + 12'345) values.push_back(v);
  for (uint64_t v : {1'000'000ull, 1'000'001ull, 10'000'000ull, 100'000'000ull, 1'000'000'000ull,
                     1'000'000'000'000ull, 999'999'999'999'999ull}) {
    values.push_back(v);
  }
  return values;
}

TEST(EnglishNumberWords, CardinalsAndOrdinalsAreCldrs) {
  Spellout icu("en");
  ASSERT_TRUE(icu.ok());
  for (uint64_t value : Values()) {
    ASSERT_EQ(EnglishCardinal(value), icu.Format(value, "%spellout-numbering")) << value;
  }
  for (uint64_t value : Values()) {
    ASSERT_EQ(EnglishOrdinal(value), icu.Format(value, "%spellout-ordinal")) << value;
  }
}

TEST(ChineseNumberWords, CardinalsAreCldrs) {
  Spellout icu("zh");
  ASSERT_TRUE(icu.ok());
  // Up to 100,000 only: above, CLDR leaves out the 零 before a group under 1000 that follows
  // 亿 (一百二十亿七百零七万 for 12,007,078,409), where common usage and WeTextProcessing say
  // 一百二十亿零七百零七万, as ours does (zh.txt: 100000001 一亿零一).
  for (uint64_t value = 0; value <= 100'000; ++value) {
    // CLDR writes the zero 〇 (the numeral); running text, and WeTextProcessing, write 零.
    std::string expected = icu.Format(value, "%spellout-numbering");
    for (size_t at; (at = expected.find("\u3007")) != std::string::npos;) {
      expected.replace(at, 3, "\u96F6");
    }
    ASSERT_EQ(ChineseCardinal(value), expected) << value;
  }
}

}  // namespace
}  // namespace voxserve::text::normalize
