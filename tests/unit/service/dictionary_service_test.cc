// Pronunciation dictionaries through TtsService (docs/pronunciation-dictionaries.md): what the
// engine is given for a request with locators and for a model with lexicon files, precedence,
// versions, the refusals, and the response cache's key and invalidation.
#include <gmock/gmock.h>

#include <fstream>

#include "core/error.h"
#include "service_test_support.h"
#include "support/temp_dir.h"

namespace voxserve::service {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using text::lexicon::Lexeme;
using text::lexicon::Lexicon;

Lexicon Aliases(std::initializer_list<std::pair<std::string, std::string>> entries) {
  Lexicon lexicon;
  for (const auto& [grapheme, alias] : entries) lexicon.lexemes.push_back({{grapheme}, alias});
  return lexicon;
}

class DictionaryServiceTest : public ServiceTest {
 protected:
  void StartWith(ServiceOptions options = {}) {
    options.dictionaries.dir = dir_.path() + "/dictionaries";
    Start(options);
  }

  store::DictionaryBackend& store() { return *service_->dictionaries().store(); }

  std::string Add(Lexicon lexicon) {
    auto added = store().Add("test", "", std::move(lexicon));
    EXPECT_TRUE(added.ok()) << added.status();
    return added.ok() ? added->id : "";
  }

  SynthesisRequest With(std::string text, std::vector<DictionaryLocator> locators) {
    SynthesisRequest request = Request(std::move(text));
    request.dictionaries = std::move(locators);
    return request;
  }

  absl::Status Refusal(SynthesisRequest request) {
    auto job = service_->Synthesize(std::move(request), std::make_shared<RecordingSink>());
    EXPECT_FALSE(job.ok());
    return job.ok() ? absl::OkStatus() : job.status();
  }

  std::string WriteFile(const std::string& name, const std::string& bytes) {
    const std::string path = dir_.path() + "/" + name;
    std::ofstream(path) << bytes;
    return path;
  }

  test_support::TempDir dir_;
};

TEST_F(DictionaryServiceTest, ALocatorsAliasesReachTheEngine) {
  StartWith();
  const std::string id = Add(Aliases({{"WWW", "World Wide Web"}}));
  RunOk(With("Visit WWW. Bye.", {{id, ""}}));
  EXPECT_THAT(engine_->texts(), ElementsAre("Visit World Wide Web.", "Bye."));
}

TEST_F(DictionaryServiceTest, IpaIsAPhonemeSegmentWhereTheEngineSpeaksIt) {
  ServiceOptions options;
  options.engine.speaks_ipa = true;
  StartWith(options);
  Lexicon lexicon;
  lexicon.lexemes.push_back({{"tomato"}, "tomahto", "təˈmɑːtoʊ"});
  const std::string id = Add(lexicon);
  RunOk(With("Say tomato now.", {{id, ""}}));
  std::vector<std::string> phonemes;
  for (const auto& call : engine_->calls())
    phonemes.insert(phonemes.end(), call.phonemes.begin(), call.phonemes.end());
  EXPECT_THAT(engine_->texts(), ElementsAre("Say", "tomato", "now."));
  EXPECT_THAT(phonemes, ElementsAre("", "təˈmɑːtoʊ", ""));
}

TEST_F(DictionaryServiceTest, ElsewhereTheAliasOfAnIpaRuleIsRead) {
  StartWith();  // the fake engine speaks no IPA
  Lexicon lexicon;
  lexicon.lexemes.push_back({{"tomato"}, "tomahto", "təˈmɑːtoʊ"});
  const std::string id = Add(lexicon);
  RunOk(With("Say tomato now.", {{id, ""}}));
  EXPECT_THAT(engine_->texts(), ElementsAre("Say tomahto now."));
}

TEST_F(DictionaryServiceTest, TheRequestsDictionariesComeFirstThenTheModels) {
  ServiceOptions options;
  options.lexicons = {
      WriteFile("model.json", R"({"entries": {"WWW": "the web", "HTML": "hypertext"}})")};
  StartWith(options);
  RunOk(Request("WWW and HTML."));
  const std::string first = Add(Aliases({{"WWW", "World Wide Web"}}));
  const std::string second = Add(Aliases({{"WWW", "dub dub dub"}, {"and", "plus"}}));
  RunOk(With("WWW and HTML.", {{first, ""}, {second, ""}}));
  EXPECT_THAT(engine_->texts(),
              ElementsAre("the web and hypertext.", "World Wide Web plus hypertext."));
}

TEST_F(DictionaryServiceTest, APinnedVersionKeepsItsRules) {
  StartWith();
  auto added = store().Add("v", "", Aliases({{"WWW", "World Wide Web"}}));
  ASSERT_TRUE(added.ok());
  auto changed = store().Update(added->id, [](const Lexicon&) -> absl::StatusOr<Lexicon> {
    return Aliases({{"WWW", "the web"}});
  });
  ASSERT_TRUE(changed.ok());
  RunOk(With("WWW.", {{added->id, added->latest.version_id}}));
  RunOk(With("WWW.", {{added->id, ""}}));
  EXPECT_THAT(engine_->texts(), ElementsAre("World Wide Web.", "the web."));
}

TEST_F(DictionaryServiceTest, RulesApplyBeforeNormalizationAndSsmlSayAsWins) {
  ServiceOptions options;
  options.engine_name = "piper";  // normalized by default
  StartWith(options);
  const std::string id = Add(Aliases({{"Dr.", "Drive"}, {"ABC", "alphabet"}}));
  RunOk(With("Dr. 5.", {{id, ""}}));
  RunOk(With("<speak><say-as interpret-as=\"characters\">ABC</say-as> ABC.</speak>", {{id, ""}}));
  EXPECT_THAT(engine_->texts(), ElementsAre("Drive five.", "A B C alphabet."));
}

TEST_F(DictionaryServiceTest, UnknownDictionariesAndVersionsAreRefusedBeforeAnyWork) {
  StartWith();
  absl::Status unknown = Refusal(With("Hi.", {{"pd_00000000000000000000", ""}}));
  EXPECT_EQ(unknown.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(core::DetailOf(unknown).code, "dictionary_not_found");
  EXPECT_EQ(core::DetailOf(unknown).param, "pronunciation_dictionary_locators");
  const std::string id = Add(Aliases({{"a", "b"}}));
  absl::Status stale = Refusal(With("Hi.", {{id, "pdv_00000000000000000000"}}));
  EXPECT_EQ(core::DetailOf(stale).code, "dictionary_version_not_found");
  absl::Status many = Refusal(With("Hi.", {{id, ""}, {id, ""}, {id, ""}, {id, ""}}));
  EXPECT_EQ(many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(many).code, "too_many_dictionaries");
  EXPECT_TRUE(engine_->texts().empty());
}

TEST_F(DictionaryServiceTest, AStreamNamingAnUnknownDictionaryIsRefusedAtItsStart) {
  StartWith();
  auto splitter = service_->SplitterForVoice(With("", {{"pd_00000000000000000000", ""}}));
  ASSERT_FALSE(splitter.ok());
  EXPECT_EQ(core::DetailOf(splitter.status()).code, "dictionary_not_found");
}

TEST_F(DictionaryServiceTest, LocatorsWithoutAStoreAreRefusedAsOff) {
  Start();
  EXPECT_EQ(service_->dictionaries().store(), nullptr);
  absl::Status off = Refusal(With("Hi.", {{"pd_00000000000000000000", ""}}));
  EXPECT_EQ(off.code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(core::DetailOf(off).code, "dictionaries_off");
}

TEST_F(DictionaryServiceTest, ABadModelLexiconFileFailsCreate) {
  ServiceConfig config;
  ModelConfig model;
  model.engine.model_id = "fake";
  model.lexicons = {WriteFile("bad.pls",
                              "<lexicon><lexeme><grapheme>a</grapheme></lexeme>"
                              "</lexicon>")};
  config.models.push_back(model);
  auto service = TtsService::Create(config, registry_);
  ASSERT_FALSE(service.ok());
  EXPECT_THAT(service.status().message(), HasSubstr("bad.pls"));
  EXPECT_THAT(service.status().message(), HasSubstr("line 1"));
}

TEST_F(DictionaryServiceTest, TheCacheKeysOnTheVersionAndForgetsAChangedDictionary) {
  ServiceOptions options;
  options.cache.enabled = true;
  StartWith(options);
  const std::string id = Add(Aliases({{"WWW", "World Wide Web"}}));
  EXPECT_THAT(RunOk(With("WWW.", {{id, ""}}))->cache_results(), ElementsAre(CacheResult::kMiss));
  EXPECT_THAT(RunOk(With("WWW.", {{id, ""}}))->cache_results(), ElementsAre(CacheResult::kHit));
  EXPECT_THAT(RunOk(Request("WWW."))->cache_results(),
              ElementsAre(CacheResult::kMiss));  // another key
  ASSERT_TRUE(store()
                  .Update(id,
                          [](const Lexicon&) -> absl::StatusOr<Lexicon> {
                            return Aliases({{"WWW", "the web"}});
                          })
                  .ok());
  EXPECT_THAT(RunOk(With("WWW.", {{id, ""}}))->cache_results(), ElementsAre(CacheResult::kMiss));
  EXPECT_THAT(engine_->texts(), ElementsAre("World Wide Web.", "WWW.", "the web."));
  EXPECT_EQ(service_->response_cache().Entries(), 2u);  // the old version's is gone
}

}  // namespace
}  // namespace voxserve::service
