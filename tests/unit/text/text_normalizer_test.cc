// Text normalization (text/normalize): the English and Chinese tables in normalization/*.txt
// (written by hand from the rules in docs/text-normalization.md), which language a voice or a
// text gets, and inputs that end in the middle of a pattern.
#include "text/normalize/text_normalizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/test_paths.h"

namespace voxserve::text::normalize {
namespace {

struct Case {
  int line = 0;
  std::string input;
  std::string expected;
};

std::vector<Case> ReadCases(const std::string& name) {
  std::ifstream file(std::string(test_paths::kNormalizationCases) + "/" + name);
  EXPECT_TRUE(file.good()) << name;
  std::vector<Case> cases;
  const std::string separator = " \xE2\x9F\xB6 ";  // " ⟶ "
  int number = 0;
  for (std::string line; std::getline(file, line);) {
    ++number;
    if (line.empty() || line.front() == '#') continue;
    const size_t at = line.find(separator);
    EXPECT_NE(at, std::string::npos) << name << ":" << number << ": no separator";
    if (at == std::string::npos) continue;
    cases.push_back({number, line.substr(0, at), line.substr(at + separator.size())});
  }
  return cases;
}

void ExpectTable(const std::string& name, std::string (*normalize)(std::string_view)) {
  const std::vector<Case> cases = ReadCases(name);
  EXPECT_GE(cases.size(), 200u);
  for (const Case& c : cases) {
    EXPECT_EQ(normalize(c.input), c.expected) << name << ":" << c.line << ": " << c.input;
    // What the rules wrote out has nothing left for them.
    EXPECT_EQ(normalize(c.expected), c.expected) << name << ":" << c.line << " (twice)";
  }
}

TEST(TextNormalization, EnglishTable) { ExpectTable("en.txt", NormalizeEnglish); }

TEST(TextNormalization, ChineseTable) { ExpectTable("zh.txt", NormalizeChinese); }

TEST(TextNormalization, TheVoicesLanguageChoosesTheRules) {
  EXPECT_EQ(NormalizationLanguageForVoice("en"), NormalizationLanguage::kEnglish);
  EXPECT_EQ(NormalizationLanguageForVoice("en-us"), NormalizationLanguage::kEnglish);
  EXPECT_EQ(NormalizationLanguageForVoice("en_GB"), NormalizationLanguage::kEnglish);
  EXPECT_EQ(NormalizationLanguageForVoice("cmn"), NormalizationLanguage::kChinese);
  EXPECT_EQ(NormalizationLanguageForVoice("zh-cn"), NormalizationLanguage::kChinese);
  EXPECT_EQ(NormalizationLanguageForVoice("yue"), NormalizationLanguage::kChinese);
  EXPECT_EQ(NormalizationLanguageForVoice("de"), NormalizationLanguage::kNone);
  EXPECT_EQ(NormalizationLanguageForVoice(""), NormalizationLanguage::kNone);
  EXPECT_EQ(NormalizeText("Es kostet 5 €.", NormalizationLanguage::kNone), "Es kostet 5 €.");
  EXPECT_EQ(NormalizeText("3 kg", NormalizationLanguage::kEnglish), "three kilograms");
  EXPECT_EQ(NormalizeText("3kg", NormalizationLanguage::kChinese), "三千克");
}

TEST(TextNormalization, TextWithHanCharactersIsChinese) {
  EXPECT_EQ(NormalizationLanguageOfText("我有3个苹果"), NormalizationLanguage::kChinese);
  EXPECT_EQ(NormalizationLanguageOfText("Order 第3章 now"), NormalizationLanguage::kChinese);
  EXPECT_EQ(NormalizationLanguageOfText("I have 3 apples"), NormalizationLanguage::kEnglish);
  EXPECT_EQ(NormalizationLanguageOfText("こんにちは"), NormalizationLanguage::kEnglish);
}

TEST(TextNormalization, PatternsCutShortAreCopied) {
  for (const char* text :
       {"$", "$.",  "1,",  "1.",  "#",  "-",  "9:", "9:5", "2026-", "2026-12-", "12:",
        "€", "£.5", "No.", "St.", "1s", "1 ", " -", "%",   "3 k",   "&"}) {
    const std::string english = NormalizeEnglish(text);
    EXPECT_FALSE(english.empty()) << text;
    EXPECT_EQ(NormalizeEnglish(english), english) << text;
  }
  for (const char* text : {"¥", "￥.", "第", "1/", "1/0", "3-", "2026/", "9：", "-", "%", "１"}) {
    EXPECT_FALSE(NormalizeChinese(text).empty()) << text;
  }
  EXPECT_EQ(NormalizeEnglish("9:5"), "nine:five");
  EXPECT_EQ(NormalizeChinese("１"), "一");
}

TEST(TextNormalization, ALongInputIsNormalizedThroughout) {
  // A text of 4096 characters (limits.max_input_chars) with a number every few characters.
  std::string text;
  while (text.size() < 4096) text += "12.5 kg, ";
  const std::string out = NormalizeEnglish(text);
  EXPECT_NE(out.find("twelve point five kilograms, twelve"), std::string::npos);
}

}  // namespace
}  // namespace voxserve::text::normalize
