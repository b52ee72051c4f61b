// VoiceStore and its file format: atomic, durable, bounded, safe under concurrent registration.
#include "store/voice_store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/error.h"
#include "store/postgres_voice_store.h"
#include "support/temp_dir.h"

namespace voxserve::store {
namespace {

namespace fs = std::filesystem;
using test_support::FilesIn;
using test_support::TempDir;

engine::VoiceProfile SmallProfile(float seed = 1.0f, size_t floats = 16) {
  engine::VoiceProfile profile;
  profile.family = "test";
  profile.prompt_seconds = 2.5;
  profile.attributes["transcript"] = "hello";
  engine::ProfileTensor embedding;
  embedding.shape = {static_cast<int64_t>(floats)};
  for (size_t i = 0; i < floats; ++i) embedding.floats.push_back(seed * static_cast<float>(i));
  profile.tensors["speaker_embedding"] = embedding;
  engine::ProfileTensor tokens;
  tokens.dtype = engine::ProfileTensor::DType::kInt32;
  tokens.shape = {2, 3};
  tokens.ints = {1, -2, 3, 4, 5, 2147483647};
  profile.tensors["prompt_speech_tokens"] = tokens;
  return profile;
}

VoiceMetadata Meta(std::string transcript = "hello there") {
  VoiceMetadata metadata;
  metadata.family = "test";
  metadata.transcript = std::move(transcript);
  metadata.prompt_seconds = 2.5;
  return metadata;
}

std::unique_ptr<VoiceStore> Open(const std::string& dir, int max_count = 1000,
                                 size_t max_bytes = 512 << 20) {
  VoiceStoreConfig config;
  config.dir = dir;
  config.max_count = max_count;
  config.max_bytes = max_bytes;
  auto store = VoiceStore::Create(config);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

void ExpectSameProfile(const engine::VoiceProfile& a, const engine::VoiceProfile& b) {
  EXPECT_EQ(a.family, b.family);
  EXPECT_EQ(a.attributes, b.attributes);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [name, tensor] : a.tensors) {
    const engine::ProfileTensor& other = b.tensors.at(name);
    EXPECT_EQ(tensor.dtype, other.dtype) << name;
    EXPECT_EQ(tensor.shape, other.shape) << name;
    EXPECT_EQ(tensor.floats, other.floats) << name;
    EXPECT_EQ(tensor.ints, other.ints) << name;
  }
}

TEST(VoiceFile, RoundTripsMetadataAndTensorsExactly) {
  VoiceMetadata metadata = Meta("Ünïcode \"quoted\" transcript");
  metadata.id = "voice_0123456789abcdef01234567";
  metadata.name = "Alice";
  metadata.model = "cosyvoice";
  metadata.created_at = 1764590000;
  engine::VoiceProfile profile = SmallProfile(0.1f);
  auto decoded = DecodeVoiceFile(EncodeVoiceFile(metadata, profile));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->metadata.id, metadata.id);
  EXPECT_EQ(decoded->metadata.name, "Alice");
  EXPECT_EQ(decoded->metadata.transcript, metadata.transcript);
  EXPECT_EQ(decoded->metadata.created_at, 1764590000);
  ExpectSameProfile(decoded->profile, profile);
}

TEST(VoiceFile, RefusesEveryDamagedOrForeignFile) {
  VoiceMetadata metadata = Meta();
  metadata.id = "voice_0123456789abcdef01234567";
  const std::string good = EncodeVoiceFile(metadata, SmallProfile());
  EXPECT_EQ(good.substr(0, 8), "VXVOICE\n");
  std::string flipped = good;
  flipped[good.size() - 3] ^= 0x01;
  EXPECT_NE(DecodeVoiceFile(flipped).status().message().find("checksum"), std::string::npos);
  for (size_t cut : {size_t{0}, size_t{10}, size_t{28}, good.size() - 1}) {
    EXPECT_FALSE(DecodeVoiceFile(good.substr(0, cut)).ok()) << "cut at " << cut;
  }
  EXPECT_FALSE(DecodeVoiceFile(good + "x").ok());
  std::string version = good;
  version[8] = 2;
  EXPECT_NE(DecodeVoiceFile(version).status().message().find("version 2"), std::string::npos);
  EXPECT_FALSE(DecodeVoiceFile("RIFF....WAVEfmt not a voice at all, long enough").ok());
}

TEST(VoiceFile, Crc32MatchesZlib) {
  // zlib.crc32(b"123456789") == 0xCBF43926, the CRC-32 check value.
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
}

TEST(VoiceStore, StoresOneFilePerVoiceAndFindsItByIdAndName) {
  TempDir dir;
  auto store = Open(dir.path());
  auto stored = store->Add("cosy", "Alice", Meta(), SmallProfile());
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(stored->metadata.id.starts_with("voice_"));
  EXPECT_EQ(stored->metadata.id.size(), 30u);
  EXPECT_GT(stored->metadata.created_at, 1'700'000'000);
  EXPECT_EQ(FilesIn(dir.path()), std::vector<std::string>{stored->metadata.id + ".voice"});
  EXPECT_EQ(store->Get(stored->metadata.id)->metadata.name, "Alice");
  EXPECT_EQ(store->FindByName("cosy", "aLiCe")->metadata.id, stored->metadata.id);
  EXPECT_FALSE(store->FindByName("other", "Alice"));
  EXPECT_EQ(store->TotalBytes(), stored->file_bytes);
  auto profile = store->LoadProfile(stored->metadata.id);
  ASSERT_TRUE(profile.ok());
  ExpectSameProfile(*profile, SmallProfile());
}

TEST(VoiceStore, VoicesSurviveARestart) {
  TempDir dir;
  std::string id;
  {
    auto store = Open(dir.path());
    id = store->Add("cosy", "Alice", Meta("one two"), SmallProfile(2.0f))->metadata.id;
    ASSERT_TRUE(store->Add("cosy", "Bob", Meta(), SmallProfile()).ok());
  }
  auto reopened = Open(dir.path());
  ASSERT_EQ(reopened->List().size(), 2u);
  auto voice = reopened->Get(id);
  ASSERT_TRUE(voice);
  EXPECT_EQ(voice->metadata.transcript, "one two");
  ExpectSameProfile(*reopened->LoadProfile(id), SmallProfile(2.0f));
  // The name index is rebuilt too.
  EXPECT_EQ(reopened->Add("cosy", "ALICE", Meta(), SmallProfile()).status().code(),
            absl::StatusCode::kAlreadyExists);
}

TEST(VoiceStore, SkipsCorruptAndForeignFilesAtStartup) {
  TempDir dir;
  std::string good_id;
  {
    auto store = Open(dir.path());
    good_id = store->Add("cosy", "Good", Meta(), SmallProfile())->metadata.id;
    auto bad = store->Add("cosy", "Bad", Meta(), SmallProfile());
    // Damage the second file after the fact (a disk error, a hand edit).
    std::fstream file(dir.path() + "/" + bad->metadata.id + ".voice",
                      std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(40);
    file.put('#');
  }
  std::ofstream(dir.path() + "/README.txt") << "operator notes";
  std::ofstream(dir.path() + "/voice_ffffffffffffffffffffffff.voice") << "garbage";
  fs::create_directory(dir.path() + "/voice_eeeeeeeeeeeeeeeeeeeeeeee.voice");
  auto store = Open(dir.path());
  ASSERT_EQ(store->List().size(), 1u);
  EXPECT_EQ(store->List()[0].metadata.id, good_id);
  // Skipped files are left alone for the operator to inspect.
  EXPECT_TRUE(fs::exists(dir.path() + "/README.txt"));
}

TEST(VoiceStore, ACrashBetweenTempWriteAndRenameLeavesNoVoice) {
  TempDir dir;
  {
    auto store = Open(dir.path());
    store->FailNextCommitBeforeRenameForTesting();
    auto failed = store->Add("cosy", "Alice", Meta(), SmallProfile());
    EXPECT_EQ(failed.status().code(), absl::StatusCode::kInternal);
    EXPECT_TRUE(store->List().empty());
    // As after a crash: the synced temporary file is still there, no .voice file is.
    auto files = FilesIn(dir.path());
    ASSERT_EQ(files.size(), 1u);
    EXPECT_TRUE(files[0].starts_with(".voice_")) << files[0];
    EXPECT_NE(files[0].find(".tmp-"), std::string::npos);
  }
  auto store = Open(dir.path());
  EXPECT_TRUE(store->List().empty());
  EXPECT_TRUE(FilesIn(dir.path()).empty()) << "the interrupted write is cleaned up";
  EXPECT_TRUE(store->Add("cosy", "Alice", Meta(), SmallProfile()).ok()) << "the name is free";
}

TEST(VoiceStore, NamesAreUniquePerModelIgnoringAsciiCase) {
  TempDir dir;
  auto store = Open(dir.path());
  ASSERT_TRUE(store->Add("cosy", "Narrator", Meta(), SmallProfile()).ok());
  auto duplicate = store->Add("cosy", "NARRATOR", Meta(), SmallProfile());
  EXPECT_EQ(duplicate.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(duplicate.status().message().find("already has a voice named"), std::string::npos);
  EXPECT_TRUE(store->Add("other", "Narrator", Meta(), SmallProfile()).ok());
  EXPECT_EQ(FilesIn(dir.path()).size(), 2u);
}

TEST(VoiceStore, NamesThatReadTheSameAreOneName) {
  // Issue 39: compared after NFKC with case folding, not ASCII case only.
  TempDir dir;
  auto store = Open(dir.path());
  const std::pair<const char*, const char*> pairs[] = {
      {"\u00e9cho", "e\u0301cho"},  // precomposed and combining
      {"Race2", "\uff32ace2"},      // ASCII and fullwidth
      {"Stra\u00dfe", "STRASSE"},   // full case folding
  };
  for (const auto& [first, look_alike] : pairs) {
    auto stored = store->Add("cosy", first, Meta(), SmallProfile());
    ASSERT_TRUE(stored.ok()) << stored.status();
    auto duplicate = store->Add("cosy", look_alike, Meta(), SmallProfile());
    EXPECT_EQ(duplicate.status().code(), absl::StatusCode::kAlreadyExists) << look_alike;
    ASSERT_TRUE(store->FindByName("cosy", look_alike)) << look_alike;
    EXPECT_EQ(store->FindByName("cosy", look_alike)->metadata.id, stored->metadata.id);
  }
  EXPECT_EQ(store->List().size(), 3u);
}

TEST(VoiceStore, LookAlikeVoicesFromBeforeTheFoldingStayReachableById) {
  // Two files whose names read the same (registered apart before NFKC folding): both load, one
  // answers by name, the other by its id; deleting the other leaves the name alone.
  TempDir first_dir;
  TempDir second_dir;
  std::string older;
  std::string younger;
  {
    older = Open(first_dir.path())->Add("cosy", "\u00e9cho", Meta(), SmallProfile())->metadata.id;
    younger =
        Open(second_dir.path())->Add("cosy", "e\u0301cho", Meta(), SmallProfile())->metadata.id;
  }
  fs::copy_file(fs::path(second_dir.path()) / (younger + ".voice"),
                fs::path(first_dir.path()) / (younger + ".voice"));
  auto store = Open(first_dir.path());
  EXPECT_EQ(store->List().size(), 2u);
  EXPECT_TRUE(store->Get(younger));
  EXPECT_TRUE(store->Get(older));
  // The oldest holds the name (both were made within one second here: either may be).
  const std::string holder = store->FindByName("cosy", "e\u0301cho")->metadata.id;
  const std::string other = holder == older ? younger : older;
  ASSERT_TRUE(store->Delete(other).ok());
  ASSERT_TRUE(store->FindByName("cosy", "\u00e9cho"));
  EXPECT_EQ(store->FindByName("cosy", "\u00e9cho")->metadata.id, holder);
}

TEST(VoiceStore, RefusesVoicesBeyondMaxCountWith507) {
  TempDir dir;
  auto store = Open(dir.path(), /*max_count=*/2);
  ASSERT_TRUE(store->Add("cosy", "a", Meta(), SmallProfile()).ok());
  ASSERT_TRUE(store->Add("cosy", "b", Meta(), SmallProfile()).ok());
  auto full = store->Add("cosy", "c", Meta(), SmallProfile());
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(core::DetailOf(full.status()).reason, core::ErrorReason::kInsufficientStorage);
  EXPECT_EQ(core::DetailOf(full.status()).code, "voice_limit_reached");
  EXPECT_EQ(FilesIn(dir.path()).size(), 2u);
  ASSERT_TRUE(store->Delete(store->List()[0].metadata.id).ok());
  EXPECT_TRUE(store->Add("cosy", "c", Meta(), SmallProfile()).ok()) << "room again after delete";
}

TEST(VoiceStore, RefusesAVoiceThatWouldPassMaxBytesAndLeavesNoFile) {
  TempDir dir;
  auto store = Open(dir.path(), 1000, /*max_bytes=*/1 << 20);
  // 300000 floats = 1.2 MB of tensor data: over the 1 MiB bound on its own.
  auto big = store->Add("cosy", "big", Meta(), SmallProfile(1.0f, 300'000));
  EXPECT_EQ(core::DetailOf(big.status()).code, "voice_storage_full");
  EXPECT_TRUE(FilesIn(dir.path()).empty());
  EXPECT_TRUE(store->Add("cosy", "big", Meta(), SmallProfile()).ok()) << "the name was released";
}

TEST(VoiceStore, ValidatesNames) {
  for (std::string_view good : {"Alice", "narrator 2", "Zoë", "日本語の声", "a.b-c_d", "x"}) {
    EXPECT_TRUE(ValidateVoiceName(good).ok()) << good;
  }
  const std::string too_long(65, 'a');
  for (std::string_view bad :
       {std::string_view(""), std::string_view("../etc"), std::string_view("a/b"),
        std::string_view("a\\b"), std::string_view(".."), std::string_view("tab\there"),
        std::string_view("nul\0x", 5), std::string_view("del\x7f"), std::string_view(" lead"),
        std::string_view("trail "), std::string_view("voice_0123"), std::string_view("VOICE_x"),
        std::string_view("\xff\xfe"), std::string_view(too_long)}) {
    absl::Status status = ValidateVoiceName(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(core::DetailOf(status).param, "name") << bad;
  }
  EXPECT_TRUE(ValidateVoiceName(std::string(64, 'a')).ok());
}

// Look-alike names (issue 29): "Alice" with a zero-width space, or with a right-to-left
// override that shows "ecilA" as something else, must not be a second "Alice".
TEST(VoiceStore, RefusesNamesWithInvisibleOrReorderingCharacters) {
  for (std::string_view bad : {"Ali\u200Bce",     // zero-width space
                               "\u202Eecila",     // right-to-left override
                               "Al\u200Dice",     // zero-width joiner
                               "Alice\u2066x",    // left-to-right isolate
                               "\uFEFFAlice",     // byte order mark
                               "Ali\u00ADce",     // soft hyphen
                               "Alic\u0085e",     // C1 control (NEL)
                               "Al\uE000ice",     // private use
                               "Alice\uFE0F",     // variation selector
                               "A\u2028lice"}) {  // line separator
    absl::Status status = ValidateVoiceName(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(core::DetailOf(status).code, "invalid_voice_name") << bad;
    EXPECT_NE(status.message().find("invisible or format characters"), std::string::npos)
        << status.message();
  }
  EXPECT_NE(ValidateVoiceName("Ali\u200Bce").message().find("U+200B at character 4"),
            std::string::npos);
  // Visible letters of other scripts stay welcome, right-to-left ones too.
  for (std::string_view good : {"שלום", "مرحبا", "Zoë", "नमस्ते"}) {
    EXPECT_TRUE(ValidateVoiceName(good).ok()) << good;
  }
}

TEST(VoiceStore, DeleteRemovesTheFileForGood) {
  TempDir dir;
  std::string id;
  {
    auto store = Open(dir.path());
    id = store->Add("cosy", "Alice", Meta(), SmallProfile())->metadata.id;
    ASSERT_TRUE(store->Delete(id).ok());
    EXPECT_FALSE(store->Get(id));
    EXPECT_EQ(store->LoadProfile(id).status().code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(store->Delete(id).code(), absl::StatusCode::kNotFound);
    EXPECT_EQ(store->TotalBytes(), 0u);
    EXPECT_TRUE(FilesIn(dir.path()).empty());
  }
  EXPECT_TRUE(Open(dir.path())->List().empty());
}

TEST(VoiceStore, ConcurrentRegistrationsStoreEachNameOnceAndEveryFileIsValid) {
  TempDir dir;
  constexpr int kThreads = 8, kPerThread = 12, kNames = 30;
  std::atomic<int> stored{0}, duplicates{0}, other{0};
  {
    auto store = Open(dir.path());
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          // Threads collide on names on purpose: 96 attempts at 30 names.
          std::string name = "voice " + std::to_string((t * kPerThread + i * 7) % kNames);
          auto result = store->Add("cosy", name, Meta(name), SmallProfile(static_cast<float>(t)));
          if (result.ok()) {
            ++stored;
          } else if (result.status().code() == absl::StatusCode::kAlreadyExists) {
            ++duplicates;
          } else {
            ++other;
          }
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(other.load(), 0);
    EXPECT_EQ(stored.load() + duplicates.load(), kThreads * kPerThread);
    EXPECT_EQ(store->List().size(), static_cast<size_t>(stored.load()));
  }
  auto reopened = Open(dir.path());
  std::set<std::string> names;
  for (const StoredVoice& voice : reopened->List()) {
    EXPECT_TRUE(names.insert(voice.metadata.name).second) << voice.metadata.name;
    EXPECT_EQ(voice.metadata.transcript, voice.metadata.name);
    EXPECT_TRUE(reopened->LoadProfile(voice.metadata.id).ok());
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(stored.load()));
  EXPECT_EQ(FilesIn(dir.path()).size(), names.size()) << "no temporary file is left";
}

TEST(VoiceStoreConfig, ValidatesItsBounds) {
  VoiceStoreConfig config;
  EXPECT_TRUE(config.Validate().ok());
  config.max_count = 0;
  EXPECT_NE(config.Validate().message().find("voices.max_count"), std::string::npos);
  config = {};
  config.max_bytes = 1000;
  EXPECT_NE(config.Validate().message().find("voices.max_bytes"), std::string::npos);
  config = {};
  config.max_upload_bytes = 10;
  EXPECT_NE(config.Validate().message().find("voices.max_upload_bytes"), std::string::npos);
}

}  // namespace
}  // namespace voxserve::store

namespace voxserve::store {
namespace {

TEST(VoiceStoreConfig, ChoosesABackendAndFindsThePostgresDsn) {
  VoiceStoreConfig config;
  EXPECT_FALSE(config.enabled()) << "no dir, dir backend: cloning is off";
  config.backend = "sqlite";
  EXPECT_NE(config.Validate().message().find("voices.backend"), std::string::npos);
  config.backend = "postgres";
  EXPECT_TRUE(config.Validate().ok());
  EXPECT_TRUE(config.enabled());
  EXPECT_NE(config.PostgresDsn().status().message().find("voices.postgres.dsn"), std::string::npos);

  config.postgres_dsn_env = "VOXSERVE_TEST_DSN_FOR_UNIT_TEST";
  ::unsetenv("VOXSERVE_TEST_DSN_FOR_UNIT_TEST");
  EXPECT_NE(config.PostgresDsn().status().message().find("VOXSERVE_TEST_DSN_FOR_UNIT_TEST"),
            std::string::npos);
  ::setenv("VOXSERVE_TEST_DSN_FOR_UNIT_TEST", "host=db dbname=env", 1);
  EXPECT_EQ(*config.PostgresDsn(), "host=db dbname=env");
  ::unsetenv("VOXSERVE_TEST_DSN_FOR_UNIT_TEST");

  TempDir dir;
  config.postgres_dsn_env.clear();
  config.postgres_dsn_file = (fs::path(dir.path()) / "dsn").string();
  EXPECT_NE(config.PostgresDsn().status().message().find("cannot read"), std::string::npos);
  std::ofstream(config.postgres_dsn_file) << "postgresql://voxserve@db/voxserve\n";
  EXPECT_EQ(*config.PostgresDsn(), "postgresql://voxserve@db/voxserve") << "newline dropped";
  config.postgres_dsn = "host=direct";
  EXPECT_EQ(*config.PostgresDsn(), "host=direct") << "the key itself comes first";
}

// Without a database: the store still starts, says why it cannot serve, and refuses changes
// with a retriable 503 (the integration test test_voice_postgres.py has a real PostgreSQL).
TEST(PostgresVoiceStore, StartsWithoutItsDatabaseAndRefusesChangesClearly) {
  VoiceStoreConfig config;
  config.backend = "postgres";
  config.postgres_dsn = "host=127.0.0.1 port=1 user=nobody dbname=none connect_timeout=1";
  auto store = PostgresVoiceStore::Create(config, nullptr);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_FALSE((*store)->Problem().empty());
  EXPECT_TRUE((*store)->List().empty());
  auto reserved = (*store)->Reserve("cosy", "Alice");
  ASSERT_EQ(reserved.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(core::DetailOf(reserved.status()).code, "voice_store_unavailable");
  EXPECT_TRUE(core::DetailOf(reserved.status()).retry_after_seconds.has_value());
  EXPECT_EQ((*store)->Delete("voice_000000000000000000000001").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ((*store)->Delete("not-an-id").code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE((*store)->WaitUntilConnected(std::chrono::milliseconds(1)));
}

}  // namespace
}  // namespace voxserve::store
