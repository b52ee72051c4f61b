#include "text/lexicon/lexicon.h"

#include <string>
#include <vector>

#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace voxserve::text::lexicon {
namespace {

using ssml::SpeechItem;
using ::testing::HasSubstr;

constexpr std::string_view kPls = R"(<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon"
         alphabet="ipa" xml:lang="en-US">
  <lexeme>
    <grapheme>tomato</grapheme>
    <phoneme>təˈmɑːtoʊ</phoneme>
  </lexeme>
  <lexeme>
    <grapheme>WWW</grapheme>
    <grapheme>W3</grapheme>
    <alias>World Wide Web</alias>
  </lexeme>
  <lexeme>
    <grapheme>New York</grapheme>
    <alias>the Big Apple</alias>
  </lexeme>
</lexicon>)";

Lexicon Parsed(std::string_view bytes) {
  auto lexicon = ParseLexicon(bytes);
  EXPECT_TRUE(lexicon.ok()) << lexicon.status();
  return lexicon.ok() ? *lexicon : Lexicon{};
}

std::vector<SpeechItem> Text(std::string text) {
  SpeechItem item;
  item.text = std::move(text);
  return {item};
}

std::string Joined(const std::vector<SpeechItem>& items) {
  std::string out;
  for (const SpeechItem& item : items)
    out += item.phonemes.empty() ? item.text : "[" + item.phonemes + "]";
  return out;
}

std::string Applied(const Lexicon& lexicon, std::string text, bool speaks_ipa = true) {
  const Lexicon* lexicons[] = {&lexicon};
  return Joined(Apply(Text(std::move(text)), lexicons, speaks_ipa));
}

TEST(ParsePls, ReadsLexemesWithGraphemesPhonemesAndAliases) {
  Lexicon lexicon = Parsed(kPls);
  EXPECT_EQ(lexicon.language, "en-US");
  ASSERT_EQ(lexicon.lexemes.size(), 3u);
  EXPECT_EQ(lexicon.lexemes[0].graphemes, std::vector<std::string>{"tomato"});
  EXPECT_EQ(lexicon.lexemes[0].ipa, "təˈmɑːtoʊ");
  EXPECT_EQ(lexicon.lexemes[1].graphemes, (std::vector<std::string>{"WWW", "W3"}));
  EXPECT_EQ(lexicon.lexemes[1].alias, "World Wide Web");
}

TEST(ParsePls, RefusesDoctypesOtherAlphabetsAndMalformedFiles) {
  auto bomb = ParsePls(
      "<!DOCTYPE l [<!ENTITY a \"aaaa\"><!ENTITY b \"&a;&a;&a;\">]><lexicon>&b;</lexicon>");
  ASSERT_FALSE(bomb.ok());
  EXPECT_THAT(bomb.status().message(), HasSubstr("DOCTYPE"));
  EXPECT_EQ(core::DetailOf(bomb.status()).code, "invalid_dictionary");
  EXPECT_FALSE(ParsePls("<lexicon alphabet=\"x-sampa\"></lexicon>").ok());
  EXPECT_THAT(ParsePls("<lexicon><lexeme><grapheme>a</grapheme></lexicon>").status().message(),
              HasSubstr("line 1"));
  EXPECT_THAT(ParsePls("<speak/>").status().message(), HasSubstr("root element"));
  EXPECT_THAT(
      ParsePls("<lexicon><lexeme><grapheme>a</grapheme></lexeme></lexicon>").status().message(),
      HasSubstr("without a <phoneme> or an <alias>"));
}

TEST(ParsePls, CountsGraphemesAgainstTheRuleBound) {
  // One lexeme of three graphemes is three rules (as RulesJson writes them back).
  const std::string three =
      "<lexicon><lexeme><grapheme>a</grapheme><grapheme>b</grapheme><grapheme>c</grapheme>"
      "<alias>x</alias></lexeme></lexicon>";
  LexiconLimits limits;
  limits.max_rules = 3;
  auto fits = ParsePls(three, limits);
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(RuleCount(*fits), 3u);
  limits.max_rules = 2;
  auto over = ParsePls(three, limits);
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(over.status().message(), HasSubstr("more than 2 graphemes (rules)"));
  EXPECT_EQ(core::DetailOf(over.status()).code, "invalid_dictionary");
}

TEST(Lexicons, RefuseGraphemesWithControlsOrNothingVisibleInEveryForm) {
  const std::string nul("a\0b", 3);
  const std::string zero_width = "\u200b";
  for (const std::string& bad : {nul, zero_width}) {
    auto pls = ParsePls("<lexicon><lexeme><grapheme>" + bad +
                        "</grapheme><alias>x</alias></lexeme></lexicon>");
    // expat itself refuses a NUL in XML; either way the file is refused.
    EXPECT_FALSE(pls.ok()) << bad;
    nlohmann::json entries = {{"entries", {{bad, "x"}}}};
    auto json = ParseJsonLexicon(entries.dump());
    ASSERT_FALSE(json.ok()) << bad;
    EXPECT_EQ(core::DetailOf(json.status()).code, "invalid_dictionary");
    nlohmann::json rules = {{{"type", "alias"}, {"string_to_replace", bad}, {"alias", "x"}}};
    auto parsed = ParseRules(rules.dump());
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("string_to_replace"));
    // An alias with a NUL is refused too (an engine reads C strings).
    nlohmann::json alias = {{{"type", "alias"}, {"string_to_replace", "a"}, {"alias", nul}}};
    EXPECT_FALSE(ParseRules(alias.dump()).ok());
  }
  auto zero_width_pls = ParsePls(
      "<lexicon><lexeme><grapheme>\u200b</grapheme><alias>x</alias>"
      "</lexeme></lexicon>");
  EXPECT_THAT(zero_width_pls.status().message(), HasSubstr("shows nothing"));
  // Zero-width characters between visible ones are text (Persian's ZWNJ).
  nlohmann::json persian = {
      {{"type", "alias"},
       {"string_to_replace", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"},
       {"alias", "x"}}};
  EXPECT_TRUE(ParseRules(persian.dump()).ok());
}

TEST(ParseJsonLexicon, AliasesAndIpa) {
  Lexicon lexicon = Parsed(
      R"({"language": "en", "entries": {"SQL": "sequel", "tomato": {"ipa": "təˈmeɪtoʊ"},
          "GIF": {"alias": "jif", "ipa": "dʒɪf"}}})");
  EXPECT_EQ(lexicon.language, "en");
  ASSERT_EQ(lexicon.lexemes.size(), 3u);
  Lexicon bare = Parsed(R"({"SQL": "sequel"})");
  ASSERT_EQ(bare.lexemes.size(), 1u);
  EXPECT_EQ(bare.lexemes[0].alias, "sequel");
  EXPECT_FALSE(ParseJsonLexicon("[1]").ok());
  EXPECT_FALSE(ParseJsonLexicon(R"({"a": 1})").ok());
  EXPECT_FALSE(ParseJsonLexicon(R"({"a": {"accent": "x"}})").ok());
  EXPECT_FALSE(ParseJsonLexicon(R"({"": "x"})").ok());
  EXPECT_FALSE(ParseJsonLexicon("{not json").ok());
}

TEST(Apply, WholeWordsOnlyAndCaseSensitive) {
  Lexicon lexicon = Parsed(R"({"SQL": "sequel", "cat": "kitty"})");
  EXPECT_EQ(Applied(lexicon, "SQL and MySQL, sql; SQL."), "sequel and MySQL, sql; sequel.");
  EXPECT_EQ(Applied(lexicon, "cat concat cats cat's (cat)"), "kitty concat cats kitty's (kitty)");
  EXPECT_EQ(Applied(lexicon, "catégorie cat"), "catégorie kitty");  // é is a letter
}

TEST(Apply, LongestMatchAndMultiWordGraphemes) {
  Lexicon lexicon = Parsed(kPls);
  EXPECT_EQ(Applied(lexicon, "I love New York and the WWW."),
            "I love the Big Apple and the World Wide Web.");
  EXPECT_EQ(Applied(lexicon, "New Yorker"), "New Yorker");
}

TEST(Apply, IpaBecomesAPhonemeItemOrStaysWhereTheEngineReadsNone) {
  Lexicon lexicon = Parsed(kPls);
  const Lexicon* lexicons[] = {&lexicon};
  std::vector<SpeechItem> items = Apply(Text("A tomato, please."), lexicons, true);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].text, "A ");
  EXPECT_EQ(items[1].text, "tomato");
  EXPECT_EQ(items[1].phonemes, "təˈmɑːtoʊ");
  EXPECT_EQ(items[2].text, ", please.");
  EXPECT_EQ(Applied(lexicon, "A tomato.", false), "A tomato.");
  Lexicon both = Parsed(R"({"GIF": {"alias": "jif", "ipa": "dʒɪf"}})");
  EXPECT_EQ(Applied(both, "a GIF", false), "a jif");
  EXPECT_EQ(Applied(both, "a GIF", true), "a [dʒɪf]");
}

TEST(Apply, EarlierDictionaryWinsAndCjkNeedsNoSpaces) {
  Lexicon first = Parsed(R"({"SQL": "sequel"})");
  Lexicon second = Parsed(R"({"SQL": "S Q L", "北京": "Beijing"})");
  const Lexicon* lexicons[] = {&first, &second};
  EXPECT_EQ(Joined(Apply(Text("SQL in 我爱北京天安门"), lexicons, true)),
            "sequel in 我爱Beijing天安门");
}

TEST(Apply, LeavesMarkupDecidedTextAlone) {
  Lexicon lexicon = Parsed(R"({"SQL": "sequel"})");
  std::vector<SpeechItem> items = Text("SQL");
  items[0].verbatim = true;  // from <sub> or <say-as>
  SpeechItem pause;
  pause.kind = SpeechItem::Kind::kBreak;
  pause.break_seconds = 1;
  items.push_back(pause);
  const Lexicon* lexicons[] = {&lexicon};
  std::vector<SpeechItem> out = Apply(items, lexicons, true);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].text, "SQL");
  EXPECT_EQ(out[1].kind, SpeechItem::Kind::kBreak);
}

TEST(Apply, KeepsTheItemsStyleAndSentenceStart) {
  Lexicon lexicon = Parsed(kPls);
  std::vector<SpeechItem> items = Text("tomato soup");
  items[0].rate = 0.5;
  items[0].voice = "v";
  items[0].starts_sentence = true;
  const Lexicon* lexicons[] = {&lexicon};
  std::vector<SpeechItem> out = Apply(items, lexicons, true);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].starts_sentence);
  EXPECT_FALSE(out[1].starts_sentence);
  for (const SpeechItem& item : out) {
    EXPECT_EQ(item.rate, 0.5);
    EXPECT_EQ(item.voice, "v");
  }
}

TEST(Apply, CaseInsensitiveLexemesFoldCaseAndKeepTheTextAsWritten) {
  Lexicon lexicon;
  lexicon.lexemes.push_back({{"nasa"}, "the space agency", "", /*case_sensitive=*/false});
  lexicon.lexemes.push_back({{"straße"}, "", "ˈʃtʁaːsə", /*case_sensitive=*/false});
  lexicon.lexemes.push_back({{"SQL"}, "sequel"});  // case-sensitive, the default
  EXPECT_EQ(Applied(lexicon, "NASA, Nasa and nasa."),
            "the space agency, the space agency and the space agency.");
  EXPECT_EQ(Applied(lexicon, "sql is not SQL"), "sql is not sequel");
  // The phoneme item keeps the text as written (word timings point at it).
  const Lexicon* lexicons[] = {&lexicon};
  auto items = Apply(Text("STRASSE or STRAßE"), lexicons, /*speaks_ipa=*/true);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0].text, "STRASSE or ");  // simple folding: ß is not "ss"
  EXPECT_EQ(items[1].text, "STRAßE");
  EXPECT_EQ(items[1].phonemes, "ˈʃtʁaːsə");
}

TEST(Apply, WithoutWordBoundariesMatchesInsideWords) {
  Lexicon lexicon;
  lexicon.lexemes.push_back({{"Kubernetes"},
                             "koo-ber-net-ease",
                             "",
                             true,
                             /*word_boundaries=*/false});
  lexicon.lexemes.push_back({{"tts"}, "text to speech"});
  EXPECT_EQ(Applied(lexicon, "MyKubernetesCluster and ttsd"), "Mykoo-ber-net-easeCluster and ttsd");
}

TEST(ParseJsonLexicon, ReadsTheMatchingFlags) {
  Lexicon lexicon = Parsed(
      R"({"entries": {"nasa": {"alias": "the space agency", "case_sensitive": false},
                       "Kube": {"alias": "coob", "word_boundaries": false}}})");
  ASSERT_EQ(lexicon.lexemes.size(), 2u);  // in the order of the keys' bytes: "Kube", "nasa"
  EXPECT_EQ(lexicon.lexemes[0], (Lexeme{{"Kube"}, "coob", "", true, false}));
  EXPECT_EQ(lexicon.lexemes[1], (Lexeme{{"nasa"}, "the space agency", "", false, true}));
  EXPECT_FALSE(ParseJsonLexicon(R"({"a": {"alias": "b", "case_sensitive": "no"}})").ok());
}

TEST(ParseRules, ReadsElevenLabsAliasAndPhonemeRules) {
  auto rules = ParseRules(R"([
    {"type": "alias", "string_to_replace": "UN", "alias": "United Nations"},
    {"type": "phoneme", "string_to_replace": "tomato", "phoneme": "təˈmɑːtoʊ",
     "alphabet": "ipa", "case_sensitive": false, "word_boundaries": false}])");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 2u);
  EXPECT_EQ((*rules)[0], (Lexeme{{"UN"}, "United Nations", "", true, true}));
  EXPECT_EQ((*rules)[1], (Lexeme{{"tomato"}, "", "təˈmɑːtoʊ", false, false}));
}

TEST(ParseRules, NamesTheRuleAndFieldInItsErrors) {
  auto expect_error = [](std::string_view json, std::string_view message) {
    auto rules = ParseRules(json);
    ASSERT_FALSE(rules.ok()) << json;
    EXPECT_THAT(rules.status().message(), HasSubstr(message)) << json;
    EXPECT_EQ(core::DetailOf(rules.status()).code, "invalid_dictionary");
  };
  expect_error(R"({"type": "alias"})", "must be an array");
  expect_error(R"([{"type": "alias", "string_to_replace": "a"}])", "rules[0]: \"alias\"");
  expect_error(R"([{"type": "x", "string_to_replace": "a", "alias": "b"}])", "\"type\"");
  expect_error(R"([{"type": "alias", "alias": "b"}])", "string_to_replace");
  expect_error(R"([{"type": "alias", "string_to_replace": "a", "alias": "b"}, 3])",
               "rules[1]: a rule must be an object");
  expect_error(R"([{"type": "phoneme", "string_to_replace": "a", "phoneme": "AH0",
                    "alphabet": "cmu-arpabet"}])",
               "cmu-arpabet");
  expect_error(R"([{"type": "alias", "string_to_replace": "a", "alias": "b",
                    "case_sensitive": 1}])",
               "must be a boolean");
  LexiconLimits limits;
  limits.max_rules = 1;
  EXPECT_FALSE(ParseRules(R"([{"type": "alias", "string_to_replace": "a", "alias": "b"},
                              {"type": "alias", "string_to_replace": "c", "alias": "d"}])",
                          limits)
                   .ok());
}

TEST(RulesJson, RoundTripsThroughParseRules) {
  Lexicon lexicon;
  lexicon.lexemes.push_back({{"UN"}, "United Nations"});
  lexicon.lexemes.push_back({{"tomato"}, "tomahto", "təˈmɑːtoʊ", false, false});
  auto rules = ParseRules(RulesJson(lexicon));
  ASSERT_TRUE(rules.ok()) << rules.status();
  EXPECT_EQ(*rules, lexicon.lexemes);
}

TEST(WritePls, IsReadBackByParsePlsAndEscapesMarkup) {
  Lexicon lexicon;
  lexicon.language = "en-GB";
  lexicon.lexemes.push_back({{"AT&T", "A<T"}, "A T and T"});
  lexicon.lexemes.push_back({{"tomato"}, "", "təˈmɑːtoʊ"});
  auto read = ParsePls(WritePls(lexicon));
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, lexicon);
  EXPECT_EQ(Parsed(WritePls(Parsed(kPls))), Parsed(kPls));
}

}  // namespace
}  // namespace voxserve::text::lexicon
