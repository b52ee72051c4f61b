// CosyVoice's text frontend against upstream's own text_normalize and frontend_utils.py,
// which the CTest fixture cosyvoice_frontend_cases runs (make_frontend_cases.py) when
// VOXSERVE_COSYVOICE_REF points at an upstream checkout; the tests skip, saying so, otherwise.
// The tokenizer is the test vocabulary of the bpe_test_vocab fixture with CosyVoice2's tokens.
#include "engine/cosyvoice/text_frontend.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_replace.h"
#include "engine/cosyvoice/special_tokens.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "support/test_paths.h"
#include "text/utf8.h"

namespace voxserve::engine::cosyvoice {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string Dir(const char* variable, const char* fallback) {
  const char* dir = std::getenv(variable);
  return dir != nullptr ? dir : fallback;
}

class CosyVoiceTextFrontendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto tokenizer = LoadTokenizer(Dir("VOXSERVE_BPE_CASES", test_paths::kBpeCases),
                                   TokenizerVersion::kCosyVoice2);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status() << " (made by the CTest fixture "
                                << "bpe_test_vocab)";
    tokenizer_ = tokenizer->release();
    frontend_ = TextFrontend::Create(tokenizer_).value().release();
    std::ifstream file(Dir("VOXSERVE_FRONTEND_CASES", test_paths::kFrontendCases) + "/cases.json");
    ASSERT_TRUE(file) << "cases.json is missing: the CTest fixture cosyvoice_frontend_cases "
                      << "makes it (ctest -R unit_engine_cosyvoice runs it first)";
    cases_ = new nlohmann::json(nlohmann::json::parse(file));
  }
  static void TearDownTestSuite() {
    delete frontend_;
    delete tokenizer_;
    delete cases_;
  }
  static const TextFrontend& frontend() { return *frontend_; }
  static const nlohmann::json& cases() { return *cases_; }

  static inline text::Qwen2Tokenizer* tokenizer_ = nullptr;
  static inline TextFrontend* frontend_ = nullptr;
  static inline nlohmann::json* cases_ = nullptr;
};

// The tests that compare with upstream: skipped, with the reason, when the fixture had no oracle.
class CosyVoiceFrontendOracleTest : public CosyVoiceTextFrontendTest {
 protected:
  void SetUp() override {
    if (cases().contains("skipped")) GTEST_SKIP() << cases()["skipped"].get<std::string>();
  }
};

TEST_F(CosyVoiceFrontendOracleTest, NormalizesAndSplitsAsUpstream) {
  ASSERT_GE(cases()["normalize"].size(), 30u);
  for (const auto& c : cases()["normalize"]) {
    const std::string& text = c["text"].get_ref<const std::string&>();
    auto pieces = frontend().Normalize(text);
    ASSERT_TRUE(pieces.ok()) << pieces.status();
    EXPECT_EQ(*pieces, c["pieces"].get<std::vector<std::string>>()) << text;
    auto whole = frontend().NormalizeWhole(text);
    ASSERT_TRUE(whole.ok());
    EXPECT_EQ(*whole, c["whole"].get<std::string>()) << text;
  }
}

TEST_F(CosyVoiceFrontendOracleTest, NormalizesRandomMixesAsUpstream) {
  ASSERT_GE(cases()["random"].size(), 300u);
  for (const auto& c : cases()["random"]) {
    const std::string& text = c["text"].get_ref<const std::string&>();
    EXPECT_EQ(frontend().Normalize(text).value(), c["pieces"].get<std::vector<std::string>>())
        << absl::CEscape(text);
    EXPECT_EQ(frontend().NormalizeWhole(text).value(), c["whole"].get<std::string>())
        << absl::CEscape(text);
  }
}

TEST_F(CosyVoiceFrontendOracleTest, SpellsNumbersOutAsInflect) {
  ASSERT_GE(cases()["numbers"].size(), 1200u);
  for (const auto& c : cases()["numbers"]) {
    const std::string& digits = c["digits"].get_ref<const std::string&>();
    EXPECT_EQ(frontend_rules::SpellOutNumber(digits), c["words"].get<std::string>()) << digits;
  }
}

TEST_F(CosyVoiceFrontendOracleTest, SplitsParagraphsAsUpstream) {
  for (const auto& c : cases()["split"]) {
    const std::string& text = c["text"].get_ref<const std::string&>();
    EXPECT_EQ(frontend_rules::SplitParagraph(text, *tokenizer_, c["lang"] == "zh"),
              c["pieces"].get<std::vector<std::string>>())
        << text;
  }
}

TEST_F(CosyVoiceFrontendOracleTest, AppliesEachRuleAsUpstream) {
  for (const auto& c : cases()["rules"]) {
    const std::string& text = c["text"].get_ref<const std::string&>();
    EXPECT_EQ(frontend_rules::ContainsChinese(text), c["contains_chinese"].get<bool>()) << text;
    if (!c["replace_blank"].is_null()) {
      EXPECT_EQ(frontend_rules::ReplaceBlank(text), c["replace_blank"].get<std::string>()) << text;
    }
    EXPECT_EQ(frontend_rules::ReplaceCornerMark(text), c["replace_corner_mark"].get<std::string>());
    EXPECT_EQ(frontend_rules::RemoveBracket(text), c["remove_bracket"].get<std::string>());
    EXPECT_EQ(frontend_rules::IsOnlyPunctuation(text), c["is_only_punctuation"].get<bool>())
        << text;
  }
}

TEST_F(CosyVoiceFrontendOracleTest, RecordsWhereUpstreamRaises) {
  // Upstream raises on these; the C++ frontend answers instead (see text_frontend.h).
  ASSERT_EQ(cases()["raising"].size(), 4u);
  EXPECT_THAT(frontend().Normalize("   ").value(), IsEmpty());  // IndexError upstream
  EXPECT_THAT(frontend().Normalize("\n").value(), IsEmpty());
  EXPECT_THAT(frontend().Normalize(".\"").value(), IsEmpty());  // only punctuation is left
  EXPECT_THAT(
      frontend().Normalize("A 37 digit number 1234567890123456789012345678901234567.").value(),
      ElementsAre("A thirty-seven digit number one two three four five six seven eight "
                  "nine zero one two three four five six seven eight nine zero one two "
                  "three four five six seven eight nine zero one two three four five six "
                  "seven."));
}

TEST_F(CosyVoiceFrontendOracleTest, SpecialTokenListsAreUpstreams) {
  const auto& upstream = cases()["special_tokens"];
  for (const auto& [name, version] :
       {std::pair{"CosyVoice2Tokenizer", TokenizerVersion::kCosyVoice2},
        std::pair{"CosyVoice3Tokenizer", TokenizerVersion::kCosyVoice3}}) {
    std::vector<std::string> ours(SpecialTokens(version).begin(), SpecialTokens(version).end());
    EXPECT_EQ(ours, upstream[name]["list"].get<std::vector<std::string>>()) << name;
  }
}

TEST_F(CosyVoiceFrontendOracleTest, AssignsSpecialTokenIdsAsHuggingFaceDoes) {
  // Our tokenizer on the test vocabulary, shifted onto Qwen2's layout (151643 BPE tokens first):
  // the assignment depends only on the order, so the ids must be upstream's.
  const int32_t base = *tokenizer_->TokenId("<|endoftext|>");
  for (const auto& pair : cases()["special_tokens"]["CosyVoice2Tokenizer"]["ids"]) {
    const std::string token = pair[0].get<std::string>();
    const auto id = tokenizer_->TokenId(token);
    ASSERT_TRUE(id.has_value()) << token;
    EXPECT_EQ(*id - base + 151643, pair[1].get<int32_t>()) << token;
  }
  EXPECT_EQ(*tokenizer_->TokenId("<|endofprompt|>") - base + 151643, 151646);
  EXPECT_EQ(*tokenizer_->TokenId("[mn]") - base + 151643, 151662);
}

// --- What holds without the oracle. ---

TEST_F(CosyVoiceTextFrontendTest, LeavesTextWithMarkersUntouched) {
  EXPECT_THAT(frontend().Normalize("  <|endofprompt|>I have 3.  ").value(),
              ElementsAre("  <|endofprompt|>I have 3.  "));
  EXPECT_THAT(frontend().Normalize("I have 3.", /*text_frontend=*/false).value(),
              ElementsAre("I have 3."));
}

TEST_F(CosyVoiceTextFrontendTest, RejectsInvalidUtf8) {
  EXPECT_EQ(frontend().Normalize("bad \xFF").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(frontend().NormalizeWhole("\xC3").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(CosyVoiceTextFrontendTest, KeepsChineseDigitsAsDigits) {
  // No zh TN model (wetext/ttsfrd) here, and upstream without one leaves digits as they are.
  EXPECT_THAT(frontend().Normalize("我有3个苹果").value(), ElementsAre("我有3个苹果。"));
}

TEST(CosyVoiceNumberToWords, ReadsGroupsWithAndAsInflect) {
  EXPECT_EQ(frontend_rules::NumberToWords(U"1001"), "one thousand and one");
  EXPECT_EQ(frontend_rules::NumberToWords(U"1100"), "one thousand, one hundred");
  EXPECT_EQ(frontend_rules::NumberToWords(U"0"), "zero");
  EXPECT_EQ(frontend_rules::NumberToWords(U"²"), "zero");
  EXPECT_EQ(frontend_rules::NumberToWords(U"21"), "twenty-one");
}

TEST_F(CosyVoiceTextFrontendTest, RefusesBadLimits) {
  EXPECT_FALSE(TextFrontend::Create(nullptr).ok());
  EXPECT_FALSE(TextFrontend::Create(tokenizer_, {.token_max_n = 10, .token_min_n = 20}).ok());
}

size_t TokenCount(const text::Qwen2Tokenizer& tokenizer, const std::string& text) {
  auto ids = tokenizer.Encode(text);
  EXPECT_TRUE(ids.ok()) << ids.status();
  return ids.ok() ? ids->size() : 0;
}

// Issue 29: a piece the LLM's KV cache cannot hold beside the prompt is cut further, at clause
// punctuation first, then between words, then between characters, each part within the budget.
TEST_F(CosyVoiceTextFrontendTest, FitToTokensCutsAtClausesThenWordsThenCharacters) {
  const std::string clauses =
      "The first clause is here, the second one follows it; and a third one ends it.";
  const size_t whole = TokenCount(*tokenizer_, clauses);
  ASSERT_GT(whole, 6u);
  EXPECT_THAT(frontend().FitToTokens(clauses, whole), ElementsAre(clauses));  // fits: untouched
  for (size_t budget : {whole - 1, whole / 2, size_t{4}, size_t{2}, size_t{1}}) {
    std::vector<std::string> parts = frontend().FitToTokens(clauses, budget);
    ASSERT_GE(parts.size(), 2u) << budget;
    std::string joined;
    for (const std::string& part : parts) {
      EXPECT_LE(TokenCount(*tokenizer_, part), budget) << part;
      joined += part;
    }
    // No word lost or reordered (parts are stripped of the spaces between them, and a comma
    // cut off alone, with no room beside its word, is nothing to speak).
    auto letters = [](std::string text) {
      std::erase_if(text, [](char c) { return c == ' ' || c == ',' || c == ';' || c == '.'; });
      return text;
    };
    EXPECT_EQ(letters(joined), letters(clauses)) << budget;
  }
  // With room for a clause (measured as cut: with the space before it), the cuts fall at its
  // punctuation.
  const size_t longest = std::max({TokenCount(*tokenizer_, "The first clause is here,"),
                                   TokenCount(*tokenizer_, " the second one follows it;"),
                                   TokenCount(*tokenizer_, " and a third one ends it.")});
  EXPECT_THAT(frontend().FitToTokens(clauses, longest),
              ElementsAre("The first clause is here,", "the second one follows it;",
                          "and a third one ends it."));
}

TEST_F(CosyVoiceTextFrontendTest, FitToTokensCutsChineseBetweenCharacters) {
  const std::string chinese = "今天天气很好我们一起去公园散步吧";  // no punctuation, no spaces
  std::vector<std::string> parts = frontend().FitToTokens(chinese, 3);
  ASSERT_GE(parts.size(), 2u);
  std::string joined;
  for (const std::string& part : parts) {
    EXPECT_LE(TokenCount(*tokenizer_, part), 3u) << part;
    joined += part;
  }
  EXPECT_EQ(joined, chinese);
  // A part of only punctuation is nothing to speak: dropped.
  const size_t hello = TokenCount(*tokenizer_, "Hello,");
  ASSERT_GT(TokenCount(*tokenizer_, "Hello, ..."), hello);
  EXPECT_THAT(frontend().FitToTokens("Hello, ...", hello), ElementsAre("Hello,"));
}

TEST_F(CosyVoiceTextFrontendTest, SplitsALongParagraphInBoundedTime) {
  std::string text;
  for (int i = 0; i < 400; ++i) text += "Sentence number " + std::to_string(i) + " is here. ";
  auto pieces = frontend().Normalize(text);
  ASSERT_TRUE(pieces.ok());
  EXPECT_GT(pieces->size(), 20u);
  for (const auto& piece : *pieces) EXPECT_LE(tokenizer_->Encode(piece)->size(), 200u);
}

// Random mixes of the characters every rule looks at: no crash, valid UTF-8 out, and no piece
// that is only punctuation (unless the text was passed through untouched).
TEST_F(CosyVoiceTextFrontendTest, SurvivesRandomMixesOfWhatTheRulesLookAt) {
  const char* atoms[] = {" ",  "  ", "\n",       ".",   "。",     "?",  "！",     "\"", "”",
                         "，", ",",  "、",       " - ", "——",     "（", "】",     "`",  "²",
                         "³",  "7",  "0",        "１",  "٣",      "a",  "Hello",  "中", "文",
                         "<|", "|>", "[breath]", "\t",  "\u3000", "😀",  "e\u0301"};
  std::mt19937 rng(12345);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) text += atoms[rng() % std::size(atoms)];
    auto pieces = frontend().Normalize(text);
    ASSERT_TRUE(pieces.ok()) << text;
    auto whole = frontend().NormalizeWhole(text);
    ASSERT_TRUE(whole.ok()) << text;
    for (const std::string& piece : *pieces) {
      EXPECT_TRUE(text::ValidateUtf8(piece, "piece").ok()) << text;
      const bool untouched = pieces->size() == 1 && piece == text;
      if (!untouched) {
        EXPECT_FALSE(frontend_rules::IsOnlyPunctuation(piece)) << text;
      }
    }
  }
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
