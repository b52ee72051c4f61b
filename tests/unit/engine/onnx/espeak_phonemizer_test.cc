// The espeak phonemizer against the espeak-ng command line (the same library, driven the way
// its CLI does it), and the clause-end recovery that replaces the terminator call Debian's
// espeak-ng 1.51 lacks.
#include "engine/espeak/espeak_phonemizer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

namespace voxserve::engine {
namespace {

// `espeak-ng -q --ipa -v <voice> <text>`: one line per clause, without punctuation.
std::vector<std::string> CliClauses(const std::string& voice, const std::string& text) {
  std::string command = "espeak-ng -q --ipa -v " + voice + " '" + text + "'";
  std::vector<std::string> lines;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return lines;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) {
    std::string line = buffer;
    while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
    while (!line.empty() && line.front() == ' ') line.erase(0, 1);
    if (!line.empty()) lines.push_back(line);
  }
  pclose(pipe);
  return lines;
}

// Words espeak switches to another language, "(en)...(cmn)", are rendered differently by the
// CLI (it prints the synthesizer's phoneme trace, with tone numbers) and by
// espeak_TextToPhonemes (the dictionary's IPA); compare what is outside them.
std::string WithoutSwitchedWords(const std::string& ipa) {
  std::string out;
  size_t at = 0;
  while (at < ipa.size()) {
    size_t open = ipa.find('(', at);
    if (open == std::string::npos) {
      out += ipa.substr(at);
      break;
    }
    out += ipa.substr(at, open - at) + "<switched>";
    size_t back = ipa.find('(', ipa.find(')', open) + 1);  // the flag switching back
    at = back == std::string::npos ? ipa.size() : ipa.find(')', back) + 1;
  }
  return out;
}

class EspeakPhonemizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto created = EspeakPhonemizer::Create("");
    ASSERT_TRUE(created.ok()) << created.status();
    phonemizer_ = std::move(*created);
  }

  std::vector<PhonemizedClause> Phonemize(const std::string& text, const std::string& voice) {
    auto clauses = phonemizer_->Phonemize(text, voice);
    EXPECT_TRUE(clauses.ok()) << clauses.status();
    return clauses.ok() ? *clauses : std::vector<PhonemizedClause>{};
  }

  void ExpectMatchesCli(const std::string& voice, const std::string& text,
                        bool ignore_switched_words = false) {
    std::vector<std::string> expected = CliClauses(voice, text);
    ASSERT_FALSE(expected.empty()) << "espeak-ng printed nothing for " << text;
    std::vector<std::string> actual;
    for (const PhonemizedClause& clause : Phonemize(text, voice)) {
      if (!clause.phonemes.empty()) actual.push_back(clause.phonemes);
    }
    if (ignore_switched_words) {
      for (auto& line : expected) line = WithoutSwitchedWords(line);
      for (auto& line : actual) line = WithoutSwitchedWords(line);
    }
    EXPECT_EQ(actual, expected) << voice << ": " << text;
  }

  std::unique_ptr<EspeakPhonemizer> phonemizer_;
};

TEST_F(EspeakPhonemizerTest, AmericanEnglishMatchesTheCommandLine) {
  ExpectMatchesCli("en-us", "Hello world, how are you? I am fine. Dr. Smith paid $5!");
  ExpectMatchesCli("en-us", "One; two: three... four");
  ExpectMatchesCli("en-us", "The quick brown fox jumps over the lazy dog.");
}

TEST_F(EspeakPhonemizerTest, GermanMatchesTheCommandLine) {
  ExpectMatchesCli("de", "Guten Tag, wie geht es dir? Mir geht es gut; danke.");
  ExpectMatchesCli("de", "Größe: 3 Äpfel und Straße!");
}

TEST_F(EspeakPhonemizerTest, MandarinMatchesTheCommandLine) {
  ExpectMatchesCli("cmn", "我是，五二。");
  // Debian's 1.51 cmn dictionary spells many characters as English words; see WithoutSwitchedWords.
  ExpectMatchesCli("cmn", "你好，世界。今天天气很好！", /*ignore_switched_words=*/true);
}

TEST_F(EspeakPhonemizerTest, RecoversEachClausesPunctuation) {
  auto clauses = Phonemize("Hello world, how are you? Fine: thanks; bye!", "en-us");
  ASSERT_EQ(clauses.size(), 5u);
  EXPECT_EQ(clauses[0].phonemes, "həlˈoʊ wˈɜːld");
  EXPECT_EQ(clauses[0].end, ClauseEnd::kComma);
  EXPECT_EQ(clauses[1].end, ClauseEnd::kQuestion);
  EXPECT_EQ(clauses[2].end, ClauseEnd::kColon);
  EXPECT_EQ(clauses[3].end, ClauseEnd::kSemicolon);
  EXPECT_EQ(clauses[4].end, ClauseEnd::kExclamation);
}

TEST_F(EspeakPhonemizerTest, RecoversFullWidthPunctuation) {
  auto clauses = Phonemize("我是，五二。", "cmn");
  ASSERT_EQ(clauses.size(), 2u);
  EXPECT_EQ(clauses[0].end, ClauseEnd::kComma);
  EXPECT_EQ(clauses[1].end, ClauseEnd::kPeriod);
}

TEST_F(EspeakPhonemizerTest, TextWithoutFinalPunctuationEndsWithoutOne) {
  auto clauses = Phonemize("Hello there", "en-us");
  ASSERT_EQ(clauses.size(), 1u);
  EXPECT_EQ(clauses[0].end, ClauseEnd::kNone);
}

TEST_F(EspeakPhonemizerTest, VoicesResolveLikeTheCommandLine) {
  EXPECT_TRUE(phonemizer_->CheckVoice("de").ok());
  // "en-gb" is a language of the voice file gmw/en, not a voice name: -v accepts it, so do we.
  EXPECT_TRUE(phonemizer_->CheckVoice("en-gb").ok());
  ExpectMatchesCli("en-gb", "Hello there, old friend.");
  EXPECT_FALSE(phonemizer_->CheckVoice("xx-nonexistent").ok());
  EXPECT_FALSE(phonemizer_->Phonemize("Hello.", "xx-nonexistent").ok());
}

TEST(ClauseEndBeforeTest, SkipsSpacesAndClosingQuotes) {
  EXPECT_EQ(ClauseEndBefore("Hi.  ", 5), ClauseEnd::kPeriod);
  EXPECT_EQ(ClauseEndBefore("He said \"fine.\" ", 16), ClauseEnd::kPeriod);
  EXPECT_EQ(ClauseEndBefore("(really?)", 9), ClauseEnd::kQuestion);
  EXPECT_EQ(ClauseEndBefore("word", 4), ClauseEnd::kNone);
  EXPECT_EQ(ClauseEndBefore("", 0), ClauseEnd::kNone);
  EXPECT_EQ(ClauseEndBefore("好！", std::string("好！").size()), ClauseEnd::kExclamation);
  EXPECT_EQ(ClauseEndBefore("a，b", 4), ClauseEnd::kComma);  // stops before "b"
}

TEST(RemoveLanguageFlagsTest, KeepsTheSwitchedWordsPhonemes) {
  EXPECT_EQ(RemoveLanguageFlags("(en)nɪθɹˈiː(cmn) s.ˈi.5"), "nɪθɹˈiː s.ˈi.5");
  EXPECT_EQ(RemoveLanguageFlags("plain"), "plain");
}

}  // namespace
}  // namespace voxserve::engine
