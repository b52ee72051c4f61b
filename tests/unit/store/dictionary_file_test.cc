// The dictionary file (store/dictionary_file.h): lossless, and strict about what it reads.
#include "store/dictionary_file.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "nlohmann/json.hpp"

namespace voxserve::store {
namespace {

using text::lexicon::Lexeme;
using text::lexicon::Lexicon;

DictionaryRecord TwoVersions() {
  Lexeme tomato;
  tomato.graphemes = {"tomato", "トマト"};
  tomato.alias = "to-mah-to";
  tomato.ipa = "təˈmɑːtoʊ";
  tomato.case_sensitive = false;
  tomato.word_boundaries = false;
  Lexeme gif;
  gif.graphemes = {"GIF"};
  gif.ipa = "dʒɪf";
  return {"pd_0123456789abcdef0123",
          "Ünïcode \"name\"",
          "line one\nline two",
          1'700'000'000,
          1'700'000'500,
          {{"pdv_0123456789abcdef0123", 1'700'000'000,
            std::make_shared<const Lexicon>(Lexicon{"en", {tomato}})},
           {"pdv_3210fedcba9876543210", 1'700'000'100,
            std::make_shared<const Lexicon>(Lexicon{"en-GB", {tomato, gif}})}}};
}

TEST(DictionaryFile, RoundTripsEveryField) {
  const DictionaryRecord record = TwoVersions();
  auto decoded = DecodeDictionaryFile(EncodeDictionaryFile(record), {});
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, record);
}

TEST(DictionaryFile, RefusesDamagedContent) {
  const std::string good = EncodeDictionaryFile(TwoVersions());
  ASSERT_TRUE(DecodeDictionaryFile(good, {}).ok());

  auto damaged = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json file = nlohmann::json::parse(good);
    change(file);
    return DecodeDictionaryFile(file.dump(), {}).status();
  };
  EXPECT_FALSE(damaged([](auto& f) { f["format"] = 2; }).ok());
  EXPECT_FALSE(damaged([](auto& f) { f["versions"] = nlohmann::json::array(); }).ok());
  EXPECT_FALSE(damaged([](auto& f) { f["versions"].push_back(f["versions"][0]); }).ok());
  EXPECT_FALSE(damaged([](auto& f) { f["versions"][0]["version_id"] = "pdv_x"; }).ok());
  EXPECT_FALSE(damaged([](auto& f) { f["id"] = "voice_1"; }).ok());
  EXPECT_FALSE(damaged([](auto& f) { f["created_at"] = "yesterday"; }).ok());
  EXPECT_FALSE(damaged([](auto& f) { f.erase("archived_at"); }).ok());
  EXPECT_FALSE(damaged([](auto& f) { f["versions"][0]["lexemes"][0].erase("ipa"); }).ok());
  EXPECT_FALSE(damaged([](auto& f) {
                 f["versions"][0]["lexemes"][0]["graphemes"] = nlohmann::json::array();
               }).ok());
  EXPECT_FALSE(damaged([](auto& f) { f["versions"][0]["lexemes"][0]["case_sensitive"] = 1; }).ok());
  EXPECT_FALSE(damaged([](auto& f) { f["archived_at"] = "now"; }).ok());
  EXPECT_TRUE(damaged([](auto& f) { f["archived_at"] = nullptr; }).ok());
  EXPECT_FALSE(DecodeDictionaryFile("{not json", {}).ok());
  text::lexicon::LexiconLimits one_lexeme;
  one_lexeme.max_rules = 1;
  EXPECT_FALSE(DecodeDictionaryFile(good, one_lexeme).ok());
}

}  // namespace
}  // namespace voxserve::store
