// DictionaryStore: versioned, durable, bounded, no update lost under concurrency.
#include "store/dictionary_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/error.h"
#include "nlohmann/json.hpp"
#include "store/dictionary_file.h"
#include "support/temp_dir.h"

namespace voxserve::store {
namespace {

namespace fs = std::filesystem;
using test_support::FilesIn;
using test_support::TempDir;
using text::lexicon::Lexeme;
using text::lexicon::Lexicon;

Lexeme AliasLexeme(std::string grapheme, std::string alias) {
  Lexeme lexeme;
  lexeme.graphemes = {std::move(grapheme)};
  lexeme.alias = std::move(alias);
  return lexeme;
}

Lexicon OneRule(std::string grapheme = "SQL", std::string alias = "sequel") {
  return {"en", {AliasLexeme(std::move(grapheme), std::move(alias))}};
}

// Every Lexeme field away from its default, so a round trip that drops one shows.
Lexicon EveryField() {
  Lexeme tomato;
  tomato.graphemes = {"tomato", "Tomato", "トマト"};
  tomato.alias = "to-mah-to";
  tomato.ipa = "təˈmɑːtoʊ";
  tomato.case_sensitive = false;
  tomato.word_boundaries = false;
  Lexeme ipa_only;
  ipa_only.graphemes = {"GIF"};
  ipa_only.ipa = "dʒɪf";
  ipa_only.case_sensitive = true;
  ipa_only.word_boundaries = false;
  Lexeme alias_only = AliasLexeme("\"quoted\" \\ slash", "escaped");
  alias_only.case_sensitive = false;
  return {"en-GB", {tomato, ipa_only, alias_only}};
}

// `edit` for Update: the latest lexicon with `lexeme` appended.
auto Append(Lexeme lexeme) {
  return [lexeme](const Lexicon& latest) -> absl::StatusOr<Lexicon> {
    Lexicon next = latest;
    next.lexemes.push_back(lexeme);
    return next;
  };
}

DictionaryStoreConfig Config(const std::string& dir) {
  DictionaryStoreConfig config;
  config.dir = dir;
  return config;
}

std::unique_ptr<DictionaryStore> Open(const DictionaryStoreConfig& config) {
  auto store = DictionaryStore::Create(config);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

std::string FileOf(const std::string& dir, const std::string& id) {
  return (fs::path(dir) / (id + ".json")).string();
}

std::string VersionsOf(const std::string& dir, const std::string& id) {
  return (fs::path(dir) / (id + ".versions")).string();
}

// What a dictionary takes on disk: its metadata file and its versions' files.
size_t BytesOnDisk(const std::string& dir, const std::string& id) {
  size_t total = fs::file_size(FileOf(dir, id));
  for (const auto& entry : fs::directory_iterator(VersionsOf(dir, id))) {
    total += fs::file_size(entry.path());
  }
  return total;
}

// The entries of a dictionary in `dir`: its metadata file and its versions' folder.
std::vector<std::string> EntriesOf(const std::string& id) {
  return {id + ".json", id + ".versions"};
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Sets a dictionary's created_at in its file (the store stamps "now", too coarse to order by).
void SetCreatedAt(const std::string& dir, const std::string& id, int64_t created_at) {
  nlohmann::json file = nlohmann::json::parse(ReadFile(FileOf(dir, id)));
  file["created_at"] = created_at;
  WriteFile(FileOf(dir, id), file.dump());
}

std::vector<std::string> IdsOf(const std::vector<DictionaryInfo>& infos) {
  std::vector<std::string> ids;
  for (const DictionaryInfo& info : infos) ids.push_back(info.id);
  return ids;
}

void ExpectSameInfo(const DictionaryInfo& a, const DictionaryInfo& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.archived_at, b.archived_at);
  EXPECT_EQ(a.latest.version_id, b.latest.version_id);
  EXPECT_EQ(a.latest.created_at, b.latest.created_at);
  EXPECT_EQ(*a.latest.lexicon, *b.latest.lexicon);
  EXPECT_EQ(a.file_bytes, b.file_bytes);
}

TEST(DictionaryStore, AddStoresOneFileAndGetReturnsTheFirstVersion) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  auto added = store->Add("Acronyms", "tech words", EveryField());
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_TRUE(IsDictionaryId(added->id)) << added->id;
  EXPECT_TRUE(HasDictionaryIdShape(added->latest.version_id, "pdv_")) << added->latest.version_id;
  EXPECT_GT(added->created_at, 1'700'000'000);
  EXPECT_EQ(added->latest.created_at, added->created_at);
  EXPECT_FALSE(added->archived_at);
  EXPECT_EQ(*added->latest.lexicon, EveryField());
  EXPECT_EQ(FilesIn(dir.path()), EntriesOf(added->id));
  EXPECT_EQ(FilesIn(VersionsOf(dir.path(), added->id)),
            std::vector<std::string>{added->latest.version_id + ".json"});
  EXPECT_EQ(added->file_bytes, BytesOnDisk(dir.path(), added->id));
  EXPECT_EQ(store->TotalBytes(), added->file_bytes);

  auto got = store->Get(added->id);
  ASSERT_TRUE(got);
  ExpectSameInfo(*got, *added);
  EXPECT_FALSE(store->Get("pd_00000000000000000000"));
}

TEST(DictionaryStore, ListsNewestFirstThenByIdDescending) {
  TempDir dir;
  std::string old_id, new_id, middle_id, tied_id;
  {
    auto store = Open(Config(dir.path()));
    old_id = store->Add("old", "", OneRule())->id;
    new_id = store->Add("new", "", OneRule())->id;
    middle_id = store->Add("middle", "", OneRule())->id;
    tied_id = store->Add("tied with middle", "", OneRule())->id;
  }
  SetCreatedAt(dir.path(), old_id, 1'700'000'100);
  SetCreatedAt(dir.path(), new_id, 1'700'000'300);
  SetCreatedAt(dir.path(), middle_id, 1'700'000'200);
  SetCreatedAt(dir.path(), tied_id, 1'700'000'200);
  auto store = Open(Config(dir.path()));
  const auto [tied_first, tied_second] = std::minmax(middle_id, tied_id, std::greater<>());
  EXPECT_EQ(IdsOf(store->List(false)),
            (std::vector<std::string>{new_id, tied_first, tied_second, old_id}));
}

TEST(DictionaryStore, ListsArchivedDictionariesOnlyWhenAsked) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  const std::string kept = store->Add("kept", "", OneRule())->id;
  const std::string archived = store->Add("archived", "", OneRule())->id;

  auto patched = store->Patch(archived, std::nullopt, true);
  ASSERT_TRUE(patched.ok()) << patched.status();
  ASSERT_TRUE(patched->archived_at);
  EXPECT_GE(*patched->archived_at, patched->created_at);
  EXPECT_EQ(IdsOf(store->List(false)), std::vector<std::string>{kept});
  std::vector<std::string> all = IdsOf(store->List(true));
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()), (std::set<std::string>{kept, archived}));

  auto restored = store->Patch(archived, std::nullopt, false);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_FALSE(restored->archived_at);
  EXPECT_EQ(store->List(false).size(), 2u);
}

TEST(DictionaryStore, PatchRenamesWithoutANewVersion) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  auto added = store->Add("before", "", OneRule());
  auto renamed = store->Patch(added->id, "after", std::nullopt);
  ASSERT_TRUE(renamed.ok()) << renamed.status();
  EXPECT_EQ(renamed->name, "after");
  EXPECT_EQ(renamed->latest.version_id, added->latest.version_id);
  EXPECT_EQ(store->Get(added->id)->name, "after");
  EXPECT_EQ(core::DetailOf(store->Patch(added->id, "", std::nullopt).status()).code,
            "invalid_dictionary_name");
  auto unknown = store->Patch("pd_00000000000000000000", "x", std::nullopt);
  EXPECT_EQ(core::DetailOf(unknown.status()).code, "dictionary_not_found");
}

TEST(DictionaryStore, UpdateAddsAVersionAndTheOldOneStaysReadableByItsId) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  auto added = store->Add("d", "", OneRule());
  auto updated = store->Update(added->id, Append(AliasLexeme("WWW", "world wide web")));
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_NE(updated->latest.version_id, added->latest.version_id);
  EXPECT_EQ(updated->latest.lexicon->lexemes.size(), 2u);

  auto first = store->Version(added->id, added->latest.version_id);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(*first->lexicon, OneRule());
  auto latest = store->Version(added->id, "");
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(latest->version_id, updated->latest.version_id);
  EXPECT_EQ(store->Get(added->id)->latest.version_id, updated->latest.version_id);
  EXPECT_EQ(store->TotalBytes(), BytesOnDisk(dir.path(), added->id));
}

TEST(DictionaryStore, UpdateReturnsTheEditsErrorUnchangedAndChangesNothing) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  auto added = store->Add("d", "", OneRule());
  const absl::Status refusal =
      core::InvalidArgument("no rule for 'x' to remove", "rule_strings", "rule_not_found");
  auto failed =
      store->Update(added->id, [&](const Lexicon&) -> absl::StatusOr<Lexicon> { return refusal; });
  EXPECT_EQ(failed.status(), refusal);
  EXPECT_EQ(store->Get(added->id)->latest.version_id, added->latest.version_id);
}

TEST(DictionaryStore, UpdateRefusesALexiconOutsideTheLimits) {
  TempDir dir;
  DictionaryStoreConfig config = Config(dir.path());
  config.limits.max_rules = 1;
  auto store = Open(config);
  auto added = store->Add("d", "", OneRule());
  auto updated = store->Update(added->id, Append(AliasLexeme("WWW", "world wide web")));
  EXPECT_EQ(core::DetailOf(updated.status()).code, "invalid_dictionary");
  auto empty_grapheme = store->Update(added->id, [](const Lexicon&) -> absl::StatusOr<Lexicon> {
    return Lexicon{"en", {AliasLexeme("", "nothing")}};
  });
  EXPECT_EQ(core::DetailOf(empty_grapheme.status()).code, "invalid_dictionary");
  EXPECT_EQ(store->Get(added->id)->latest.version_id, added->latest.version_id);
}

TEST(DictionaryStore, KeepsOnlyTheNewestMaxVersions) {
  TempDir dir;
  DictionaryStoreConfig config = Config(dir.path());
  config.max_versions = 2;
  auto store = Open(config);
  auto v1 = store->Add("d", "", OneRule());
  auto v2 = store->Update(v1->id, Append(AliasLexeme("A", "a")));
  auto v3 = store->Update(v1->id, Append(AliasLexeme("B", "b")));
  ASSERT_TRUE(v3.ok()) << v3.status();

  auto dropped = store->Version(v1->id, v1->latest.version_id);
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(core::DetailOf(dropped.status()).param, "version_id");
  EXPECT_EQ(core::DetailOf(dropped.status()).code, "dictionary_version_not_found");
  EXPECT_TRUE(store->Version(v1->id, v2->latest.version_id).ok());
  EXPECT_TRUE(store->Version(v1->id, v3->latest.version_id).ok());

  auto reopened = Open(config);
  EXPECT_FALSE(reopened->Version(v1->id, v1->latest.version_id).ok());
  EXPECT_TRUE(reopened->Version(v1->id, v2->latest.version_id).ok());
}

TEST(DictionaryStore, UnknownDictionaryOrVersionIsNotFoundWithItsParam) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  auto added = store->Add("d", "", OneRule());
  auto no_dictionary = store->Version("pd_00000000000000000000", "");
  EXPECT_EQ(no_dictionary.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(core::DetailOf(no_dictionary.status()).param, "pronunciation_dictionary_id");
  EXPECT_EQ(core::DetailOf(no_dictionary.status()).code, "dictionary_not_found");
  auto no_version = store->Version(added->id, "pdv_00000000000000000000");
  EXPECT_EQ(core::DetailOf(no_version.status()).code, "dictionary_version_not_found");
  EXPECT_EQ(core::DetailOf(
                store->Update("pd_00000000000000000000", Append(AliasLexeme("A", "a"))).status())
                .code,
            "dictionary_not_found");
}

TEST(DictionaryStore, ReloadGivesEqualDictionariesWithEveryVersion) {
  TempDir dir;
  std::string id;
  std::vector<DictionaryInfo> before;
  std::vector<DictionaryVersion> versions;
  {
    auto store = Open(Config(dir.path()));
    auto added = store->Add("Ünïcode \"name\"", "line one\nline two", EveryField());
    id = added->id;
    versions.push_back(added->latest);
    auto updated = store->Update(id, Append(AliasLexeme("SQL", "sequel")));
    versions.push_back(updated->latest);
    ASSERT_TRUE(store->Patch(id, std::nullopt, true).ok());
    ASSERT_TRUE(store->Add("second", "", OneRule()).ok());
    before = store->List(true);
  }
  auto store = Open(Config(dir.path()));
  std::vector<DictionaryInfo> after = store->List(true);
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) ExpectSameInfo(after[i], before[i]);
  for (const DictionaryVersion& version : versions) {
    auto reloaded = store->Version(id, version.version_id);
    ASSERT_TRUE(reloaded.ok()) << reloaded.status();
    EXPECT_EQ(reloaded->created_at, version.created_at);
    EXPECT_EQ(*reloaded->lexicon, *version.lexicon);
  }
  size_t total = 0;
  for (const DictionaryInfo& info : after) total += info.file_bytes;
  EXPECT_EQ(store->TotalBytes(), total);
}

TEST(DictionaryStore, StartupRemovesInterruptedWritesAndSkipsDamagedOrForeignFiles) {
  TempDir dir;
  std::string good;
  {
    auto store = Open(Config(dir.path()));
    good = store->Add("good", "", OneRule())->id;
  }
  const std::string temp = "." + good + ".json.tmp-4242";
  WriteFile((fs::path(dir.path()) / temp).string(), "{\"format\": 1, \"id\": \"half writ");
  const std::string corrupt = "pd_0123456789abcdef0123.json";
  WriteFile((fs::path(dir.path()) / corrupt).string(), "{not json");
  // A valid file under another dictionary's name.
  const std::string renamed = "pd_aaaaaaaaaaaaaaaaaaaa.json";
  fs::copy_file(FileOf(dir.path(), good), fs::path(dir.path()) / renamed);
  const std::string foreign = "README.txt";
  WriteFile((fs::path(dir.path()) / foreign).string(), "notes");

  auto store = Open(Config(dir.path()));
  EXPECT_EQ(IdsOf(store->List(true)), std::vector<std::string>{good});
  EXPECT_EQ(store->TotalBytes(), BytesOnDisk(dir.path(), good));
  // The interrupted write is gone; files the store does not own are left for the operator.
  std::vector<std::string> left = {foreign, corrupt, good + ".json", good + ".versions", renamed};
  std::sort(left.begin(), left.end());
  EXPECT_EQ(FilesIn(dir.path()), left);
}

TEST(DictionaryStore, StartupSkipsAFileOutsideTheLexiconLimits) {
  TempDir dir;
  std::string big, small;
  {
    auto store = Open(Config(dir.path()));
    big = store->Add("big", "", EveryField())->id;  // 3 lexemes
    small = store->Add("small", "", OneRule())->id;
  }
  DictionaryStoreConfig config = Config(dir.path());
  config.limits.max_rules = 2;
  auto store = Open(config);
  EXPECT_FALSE(store->Get(big));
  EXPECT_TRUE(store->Get(small));
}

TEST(DictionaryStore, RefusesAddPastMaxCountAndLeavesNothingOnDisk) {
  TempDir dir;
  DictionaryStoreConfig config = Config(dir.path());
  config.max_count = 1;
  auto store = Open(config);
  auto first = store->Add("first", "", OneRule());
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = store->Add("second", "", OneRule());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(core::DetailOf(second.status()).code, "dictionary_limit_reached");
  EXPECT_EQ(FilesIn(dir.path()), EntriesOf(first->id));
}

TEST(DictionaryStore, RefusesWritesPastMaxBytesAndLeavesTheFilesAsTheyWere) {
  TempDir dir;
  DictionaryStoreConfig config = Config(dir.path());
  {
    // The size of one small dictionary's file, to set the bound just above it.
    TempDir probe;
    config.max_bytes = Open(Config(probe.path()))->Add("d", "", OneRule())->file_bytes + 20;
  }
  auto store = Open(config);
  auto added = store->Add("d", "", OneRule());
  ASSERT_TRUE(added.ok()) << added.status();
  const std::string before = ReadFile(FileOf(dir.path(), added->id));

  auto too_big = store->Add("e", "", OneRule());
  EXPECT_EQ(too_big.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(core::DetailOf(too_big.status()).code, "dictionary_storage_full");
  auto grown = store->Update(added->id, Append(AliasLexeme("WWW", "world wide web")));
  EXPECT_EQ(core::DetailOf(grown.status()).code, "dictionary_storage_full");

  EXPECT_EQ(FilesIn(dir.path()), EntriesOf(added->id));
  EXPECT_EQ(FilesIn(VersionsOf(dir.path(), added->id)).size(), 1u);
  EXPECT_EQ(ReadFile(FileOf(dir.path(), added->id)), before);
  EXPECT_EQ(store->Get(added->id)->latest.version_id, added->latest.version_id);
  EXPECT_EQ(store->TotalBytes(), added->file_bytes);
}

TEST(DictionaryStore, AChangeWritesItsVersionAndTheMetadataOnly) {
  // Issue 39: every change rewrote every kept version (a 13.5 MB file per add-rules).
  TempDir dir;
  DictionaryStoreConfig config = Config(dir.path());
  config.max_versions = 2;
  auto store = Open(config);
  auto added = store->Add("d", "", OneRule());
  const std::string first_file =
      (fs::path(VersionsOf(dir.path(), added->id)) / (added->latest.version_id + ".json")).string();
  struct stat before {};
  ASSERT_EQ(::stat(first_file.c_str(), &before), 0);
  auto second = store->Update(added->id, Append(AliasLexeme("WWW", "world wide web")));
  ASSERT_TRUE(second.ok()) << second.status();
  struct stat after {};
  ASSERT_EQ(::stat(first_file.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);  // the first version's file was not written again
  EXPECT_EQ(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
  EXPECT_EQ(FilesIn(VersionsOf(dir.path(), added->id)).size(), 2u);
  // A third version drops the first (max_versions 2): its file goes too.
  auto third = store->Update(added->id, Append(AliasLexeme("FTP", "file transfer")));
  ASSERT_TRUE(third.ok()) << third.status();
  std::vector<std::string> expected = {second->latest.version_id + ".json",
                                       third->latest.version_id + ".json"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(FilesIn(VersionsOf(dir.path(), added->id)), expected);
  EXPECT_FALSE(fs::exists(first_file));
  EXPECT_EQ(store->TotalBytes(), BytesOnDisk(dir.path(), added->id));
  // A rename writes the metadata alone.
  ASSERT_TRUE(store->Patch(added->id, std::string("renamed"), std::nullopt).ok());
  EXPECT_EQ(FilesIn(VersionsOf(dir.path(), added->id)).size(), 2u);
  EXPECT_EQ(store->TotalBytes(), BytesOnDisk(dir.path(), added->id));
}

TEST(DictionaryStore, OlderVersionsAreReadFromTheirFilesNotHeldInMemory) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  auto added = store->Add("d", "", OneRule());
  std::vector<std::string> versions = {added->latest.version_id};
  const size_t updates = DictionaryStore::kCachedOlderVersions + 2;
  for (size_t i = 0; i < updates; ++i) {
    auto updated = store->Update(added->id, Append(AliasLexeme("W" + std::to_string(i), "w")));
    ASSERT_TRUE(updated.ok()) << updated.status();
    versions.push_back(updated->latest.version_id);
  }
  // Each older version reads back whole (from its file, or the small cache).
  for (size_t i = 0; i < versions.size(); ++i) {
    auto version = store->Version(added->id, versions[i]);
    ASSERT_TRUE(version.ok()) << version.status();
    EXPECT_EQ(version->lexicon->lexemes.size(), i + 1);
  }
  // The first version is neither in the index nor, after the later ones were read, in the
  // cache: with its file gone it cannot be answered, and says why.
  fs::remove(fs::path(VersionsOf(dir.path(), added->id)) / (versions[0] + ".json"));
  auto gone = store->Version(added->id, versions[0]);
  EXPECT_EQ(gone.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(gone.status().message()), ::testing::HasSubstr("cannot be read"));
  // The latest never waits for the disk.
  fs::remove(fs::path(VersionsOf(dir.path(), added->id)) / (versions.back() + ".json"));
  EXPECT_TRUE(store->Version(added->id, "").ok());
}

TEST(DictionaryStore, AFormatOneFileIsConvertedAtStartup) {
  // The layout before issue 39: one file with every version inline.
  TempDir dir;
  DictionaryRecord record;
  record.id = "pd_0123456789abcdef0123";
  record.name = "old";
  record.created_at = 1'700'000'000;
  record.versions = {
      {"pdv_00000000000000000001", 1'700'000'000, std::make_shared<const Lexicon>(OneRule())},
      {"pdv_00000000000000000002", 1'700'000'100, std::make_shared<const Lexicon>(EveryField())}};
  WriteFile(FileOf(dir.path(), record.id), EncodeDictionaryFile(record));
  auto store = Open(Config(dir.path()));
  auto info = store->Get(record.id);
  ASSERT_TRUE(info);
  EXPECT_EQ(*info->latest.lexicon, EveryField());
  EXPECT_EQ(*store->Version(record.id, "pdv_00000000000000000001")->lexicon, OneRule());
  EXPECT_EQ(FilesIn(dir.path()), EntriesOf(record.id));
  EXPECT_EQ(
      FilesIn(VersionsOf(dir.path(), record.id)),
      (std::vector<std::string>{"pdv_00000000000000000001.json", "pdv_00000000000000000002.json"}));
  EXPECT_EQ(nlohmann::json::parse(ReadFile(FileOf(dir.path(), record.id)))["format"], 2);
  EXPECT_EQ(store->TotalBytes(), BytesOnDisk(dir.path(), record.id));
  // And reopens as is.
  store.reset();
  auto reopened = Open(Config(dir.path()));
  EXPECT_EQ(*reopened->Get(record.id)->latest.lexicon, EveryField());
}

TEST(DictionaryStore, StartupRemovesVersionFilesNothingNames) {
  TempDir dir;
  std::string kept;
  {
    auto store = Open(Config(dir.path()));
    kept = store->Add("kept", "", OneRule())->id;
  }
  // A version written by a change that crashed before its metadata, and the versions of a
  // dictionary whose deletion crashed after the metadata's unlink.
  const fs::path stray = fs::path(VersionsOf(dir.path(), kept)) / "pdv_ffffffffffffffffffff.json";
  WriteFile(stray.string(), EncodeLexiconFile(OneRule()));
  const fs::path orphan = VersionsOf(dir.path(), "pd_eeeeeeeeeeeeeeeeeeee");
  fs::create_directory(orphan);
  WriteFile((orphan / "pdv_eeeeeeeeeeeeeeeeeeee.json").string(), EncodeLexiconFile(OneRule()));
  auto store = Open(Config(dir.path()));
  EXPECT_FALSE(fs::exists(stray));
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_EQ(FilesIn(dir.path()), EntriesOf(kept));
  EXPECT_EQ(store->TotalBytes(), BytesOnDisk(dir.path(), kept));
}

TEST(DictionaryStore, DeleteRemovesTheFileAndTheEntry) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  auto added = store->Add("d", "", OneRule());
  auto held = store->Version(added->id, "");  // a reader's version outlives the dictionary
  ASSERT_TRUE(store->Delete(added->id).ok());
  EXPECT_TRUE(FilesIn(dir.path()).empty());
  EXPECT_FALSE(store->Get(added->id));
  EXPECT_EQ(core::DetailOf(store->Version(added->id, "").status()).code, "dictionary_not_found");
  EXPECT_EQ(store->Delete(added->id).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store->TotalBytes(), 0u);
  EXPECT_EQ(*held->lexicon, OneRule());
  EXPECT_TRUE(Open(Config(dir.path()))->List(true).empty());
}

TEST(DictionaryStore, ConcurrentUpdatesEachMakeOneVersionAndLoseNothing) {
  TempDir dir;
  DictionaryStoreConfig config = Config(dir.path());
  config.max_versions = 100;
  auto store = Open(config);
  auto added = store->Add("d", "", OneRule());
  constexpr int kThreads = 8;
  std::vector<std::string> version_ids(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      auto updated = store->Update(added->id, Append(AliasLexeme("w" + std::to_string(i), "x")));
      EXPECT_TRUE(updated.ok()) << updated.status();
      if (updated.ok()) version_ids[i] = updated->latest.version_id;
    });
  }
  for (std::thread& thread : threads) thread.join();

  EXPECT_EQ(std::set<std::string>(version_ids.begin(), version_ids.end()).size(),
            static_cast<size_t>(kThreads));
  std::set<size_t> sizes;  // each version holds one lexeme more than the one before it
  for (const std::string& version_id : version_ids) {
    auto version = store->Version(added->id, version_id);
    ASSERT_TRUE(version.ok()) << version.status();
    sizes.insert(version->lexicon->lexemes.size());
  }
  EXPECT_EQ(sizes, (std::set<size_t>{2, 3, 4, 5, 6, 7, 8, 9}));
  std::set<std::string> graphemes;
  for (const Lexeme& lexeme : store->Get(added->id)->latest.lexicon->lexemes) {
    graphemes.insert(lexeme.graphemes.at(0));
  }
  EXPECT_EQ(graphemes,
            (std::set<std::string>{"SQL", "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"}));
}

TEST(DictionaryStore, ReportsEachSuccessfulChangeOnceOutsideTheLock) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  std::vector<std::string> changed;
  store->SetOnChanged([&](const std::string& id) {
    changed.push_back(id);
    store->Get(id);  // would deadlock if the store still held its lock
  });
  auto added = store->Add("d", "", OneRule());
  EXPECT_TRUE(changed.empty());
  ASSERT_TRUE(store->Update(added->id, Append(AliasLexeme("A", "a"))).ok());
  ASSERT_TRUE(store->Patch(added->id, "renamed", std::nullopt).ok());
  ASSERT_FALSE(store
                   ->Update(added->id,
                            [](const Lexicon&) -> absl::StatusOr<Lexicon> {
                              return absl::InvalidArgumentError("refused");
                            })
                   .ok());
  ASSERT_FALSE(store->Patch(added->id, "", std::nullopt).ok());
  ASSERT_TRUE(store->Delete(added->id).ok());
  EXPECT_EQ(changed, (std::vector<std::string>{added->id, added->id, added->id}));
}

TEST(DictionaryStore, ValidatesNamesAndDescriptions) {
  TempDir dir;
  auto store = Open(Config(dir.path()));
  for (const std::string& bad :
       {std::string(), std::string(201, 'a'), std::string("bad \xff utf8"),
        std::string("tab\there"), std::string("del\x7f"), std::string("c1 \xc2\x85 next line"),
        // Invisible and format characters, as in voice names (names that look like others).
        std::string("zero\u200bwidth"), std::string("\u202eright-to-left")}) {
    auto added = store->Add(bad, "", OneRule());
    EXPECT_EQ(added.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(core::DetailOf(added.status()).param, "name") << bad;
    EXPECT_EQ(core::DetailOf(added.status()).code, "invalid_dictionary_name") << bad;
  }
  EXPECT_TRUE(store->Add(std::string(200, 'a'), std::string(1000, 'd'), OneRule()).ok());
  EXPECT_EQ(core::DetailOf(store->Add("d", std::string(1001, 'd'), OneRule()).status()).code,
            "invalid_description");
  // ElevenLabs allows two dictionaries of one name.
  auto one = store->Add("twin", "", OneRule());
  auto two = store->Add("twin", "", OneRule());
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_NE(one->id, two->id);
  EXPECT_EQ(FilesIn(dir.path()).size(), 6u);  // a metadata file and a versions folder each
}

TEST(DictionaryStoreConfig, ValidateNamesTheKeyAtFault) {
  EXPECT_TRUE(DictionaryStoreConfig{}.Validate().ok());
  auto message = [](auto change) {
    DictionaryStoreConfig config;
    change(config);
    return std::string(config.Validate().message());
  };
  EXPECT_NE(message([](auto& c) { c.max_versions = 0; }).find("dictionaries.max_versions"),
            std::string::npos);
  EXPECT_NE(message([](auto& c) { c.max_versions = 1001; }).find("dictionaries.max_versions"),
            std::string::npos);
  EXPECT_NE(message([](auto& c) { c.max_count = 0; }).find("dictionaries.max_count"),
            std::string::npos);
  EXPECT_NE(message([](auto& c) { c.max_bytes = 0; }).find("dictionaries.max_bytes"),
            std::string::npos);
  EXPECT_NE(message([](auto& c) { c.max_upload_bytes = 0; }).find("dictionaries.max_upload_bytes"),
            std::string::npos);
  TempDir dir;
  DictionaryStoreConfig config = Config(dir.path());
  config.max_versions = 0;
  EXPECT_EQ(DictionaryStore::Create(config).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(DictionaryId, IsPdAndTwentyLowerCaseHexDigits) {
  EXPECT_TRUE(IsDictionaryId("pd_0123456789abcdef0123"));
  EXPECT_FALSE(IsDictionaryId("pd_0123456789ABCDEF0123"));
  EXPECT_FALSE(IsDictionaryId("pd_0123456789abcdef012"));
  EXPECT_FALSE(IsDictionaryId("pdv_0123456789abcdef0123"));
  EXPECT_FALSE(IsDictionaryId(""));
}

}  // namespace
}  // namespace voxserve::store
