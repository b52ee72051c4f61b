// The hub's file listing is checked before any of it names a path on disk, the --include
// patterns match as the hub's CLI matches them, and the environment is read as the hub's own
// clients read it.
#include "hub/repo_listing.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "hub/file_digest.h"
#include "hub/hub_config.h"

namespace voxserve::hub {
namespace {

using ::testing::HasSubstr;

constexpr char kCommit[] = "0123456789abcdef0123456789abcdef01234567";
constexpr char kBlob[] = "89abcdef0123456789abcdef0123456789abcdef";
constexpr char kSha256[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string Listing(const std::string& path, bool lfs = false) {
  std::string entry =
      R"({"rfilename": ")" + path + R"(", "blobId": ")" + kBlob + R"(", "size": 12)";
  if (lfs) entry += R"(, "lfs": {"sha256": ")" + std::string(kSha256) + R"(", "size": 1000})";
  return R"({"id": "o/n", "sha": ")" + std::string(kCommit) + R"(", "siblings": [)" + entry + "}]}";
}

TEST(RepoListing, ReadsCommitFilesAndTheirBlobNames) {
  auto plain = ParseRepoListing(Listing("en/voice.onnx.json"));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->commit, kCommit);
  ASSERT_EQ(plain->files.size(), 1u);
  EXPECT_EQ(plain->files[0].path, "en/voice.onnx.json");
  EXPECT_EQ(plain->files[0].size, 12u);
  EXPECT_EQ(plain->files[0].etag(), kBlob);  // a plain file: its git blob SHA-1

  auto lfs = ParseRepoListing(Listing("en/voice.onnx", /*lfs=*/true));
  ASSERT_TRUE(lfs.ok()) << lfs.status();
  EXPECT_EQ(lfs->files[0].etag(), kSha256);  // an LFS file: its SHA-256
  EXPECT_EQ(lfs->files[0].size, 1000u);      // the LFS object's size, not the pointer's
}

TEST(RepoListing, PathsThatWouldLeaveTheSnapshotAreRefused) {
  for (const char* path :
       {"../escape", "a/../../b", "/etc/passwd", "a//b", "./a", "a/.", "a\\\\b", ""}) {
    auto listing = ParseRepoListing(Listing(path));
    EXPECT_EQ(listing.status().code(), absl::StatusCode::kDataLoss) << path;
  }
}

TEST(RepoListing, AnswersThatAreNoListingAreDataLoss) {
  for (const char* text : {"<html>proxy login</html>", "[]", R"({"sha": "short"})",
                           R"({"sha": "0123456789abcdef0123456789abcdef01234567"})"}) {
    EXPECT_EQ(ParseRepoListing(text).status().code(), absl::StatusCode::kDataLoss) << text;
  }
  // Without blobs=true the hub leaves out blob ids and sizes.
  std::string bare =
      R"({"sha": ")" + std::string(kCommit) + R"(", "siblings": [{"rfilename": "a"}]})";
  EXPECT_THAT(ParseRepoListing(bare).status().message(), HasSubstr("blobs=true"));
}

TEST(RepoListing, IncludePatternsMatchAsTheHubsCli) {
  EXPECT_TRUE(MatchesAny("anything/at/all", {}));
  EXPECT_TRUE(MatchesAny("en/en_US/lessac/medium/x.onnx", {"en/en_US/lessac/medium/*"}));
  EXPECT_TRUE(MatchesAny("en/en_US/lessac/medium/x.onnx", {"en/*"}));  // '*' crosses '/'
  EXPECT_TRUE(MatchesAny("en/en_US/x.onnx", {"de/*", "en/"}));         // a folder's files
  EXPECT_TRUE(MatchesAny("model.onnx", {"*.onnx"}));
  EXPECT_FALSE(MatchesAny("de/de_DE/x.onnx", {"en/*"}));
  EXPECT_FALSE(MatchesAny("model.onnx.json", {"*.onnx"}));
}

TEST(RepoListing, APiperVoiceByNameIsItsGraphAndConfigInPiperVoices) {
  EXPECT_EQ(*PiperVoiceInclude("en_US-lessac-medium"),
            "en/en_US/lessac/medium/en_US-lessac-medium.onnx*");
  EXPECT_EQ(*PiperVoiceInclude("en_US-libritts_r-medium"),
            "en/en_US/libritts_r/medium/en_US-libritts_r-medium.onnx*");
  EXPECT_EQ(*PiperVoiceInclude("de_DE-thorsten-x_low"),
            "de/de_DE/thorsten/x_low/de_DE-thorsten-x_low.onnx*");
  EXPECT_TRUE(MatchesAny("en/en_US/lessac/medium/en_US-lessac-medium.onnx.json",
                         {*PiperVoiceInclude("en_US-lessac-medium")}));
  for (const char* bad : {"lessac", "en_US-lessac", "en_US-lessac-huge", "en-US-lessac-medium",
                          "en_US-../x-medium", "en_US-lessac-medium.onnx"}) {
    EXPECT_EQ(PiperVoiceInclude(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(HubConfig, ReadsTheVariablesTheHubsClientsRead) {
  std::map<std::string, std::string> env = {{"HOME", "/home/u"}};
  auto getenv = [&env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  HubConfig defaults = HubConfigFromEnvironment(getenv);
  EXPECT_EQ(defaults.endpoint, "https://huggingface.co");
  EXPECT_EQ(defaults.cache_dir, "/home/u/.cache/huggingface/hub");
  EXPECT_EQ(defaults.token, "");

  env["XDG_CACHE_HOME"] = "/xdg";
  EXPECT_EQ(HubConfigFromEnvironment(getenv).cache_dir, "/xdg/huggingface/hub");
  env["HF_HOME"] = "/hf";
  EXPECT_EQ(HubConfigFromEnvironment(getenv).cache_dir, "/hf/hub");
  env["HF_HUB_CACHE"] = "/cache";
  env["HF_ENDPOINT"] = "http://mirror.example/";
  env["HF_TOKEN"] = "hf_x";
  HubConfig set = HubConfigFromEnvironment(getenv);
  EXPECT_EQ(set.cache_dir, "/cache");
  EXPECT_EQ(set.endpoint, "http://mirror.example");
  EXPECT_EQ(set.token, "hf_x");
}

TEST(HubConfig, RepositoryIdsAreOwnerSlashName) {
  EXPECT_TRUE(ValidateRepoId("FunAudioLLM/CosyVoice2-0.5B").ok());
  EXPECT_TRUE(ValidateRepoId("rhasspy/piper-voices").ok());
  for (const char* bad :
       {"piper-voices", "a/b/c", "/b", "a/", "a/..", "a/.b", "a/b-", "a/b c", "a/b%2F"}) {
    EXPECT_EQ(ValidateRepoId(bad).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(FileDigest, Sha256AndGitBlobSha1AreThoseOfTheHub) {
  const std::string path = std::filesystem::temp_directory_path() / "voxserve-digest-test";
  { std::ofstream(path) << "hello\n"; }
  EXPECT_EQ(*Sha256Hex(path), "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03");
  EXPECT_EQ(*GitBlobSha1Hex(path), "ce013625030ba8dba906f756967f9e9ca394464a");  // git hash-object
  std::remove(path.c_str());
}

}  // namespace
}  // namespace voxserve::hub
