// EspeakSynthProcess: every synthesis in a child of a template process that never synthesizes,
// so each starts from the same state (issue 29), and a template that dies is replaced.
#include "engine/espeak/espeak_synth_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace voxserve::engine {
namespace {

constexpr const char* kVoice = "gmw/en-US";  // espeak_SetVoiceByName's name of en-us

TEST(EspeakSynthProcess, GivesTheSameSamplesAndWordsForTheSameRequestEveryTime) {
  auto process = EspeakSynthProcess::Start("");
  ASSERT_TRUE(process.ok()) << process.status();
  auto first = (*process)->Synthesize(kVoice, 175, -1, "One two.");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_FALSE(first->samples.empty());
  ASSERT_EQ(first->words.size(), 2u);
  ASSERT_TRUE((*process)->Synthesize(kVoice, 300, -1, "The quick brown fox jumps.").ok());
  auto again = (*process)->Synthesize(kVoice, 175, -1, "One two.");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->samples, first->samples);
  EXPECT_EQ(again->words[1].audio_ms, first->words[1].audio_ms);
}

TEST(EspeakSynthProcess, ATemplateThatDiedIsReplacedAndSpeaksTheSame) {
  auto process = EspeakSynthProcess::Start("");
  ASSERT_TRUE(process.ok()) << process.status();
  auto before = (*process)->Synthesize(kVoice, 175, -1, "Still here.");
  ASSERT_TRUE(before.ok()) << before.status();
  const pid_t old_pid = (*process)->pid();
  ASSERT_GT(old_pid, 0);
  ASSERT_EQ(::kill(old_pid, SIGKILL), 0);
  auto after = (*process)->Synthesize(kVoice, 175, -1, "Still here.");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_NE((*process)->pid(), old_pid);
  EXPECT_EQ(after->samples, before->samples);
}

TEST(EspeakSynthProcess, AVoiceTheLibraryDoesNotHaveIsAnErrorAndTheNextRequestWorks) {
  auto process = EspeakSynthProcess::Start("");
  ASSERT_TRUE(process.ok()) << process.status();
  auto missing = (*process)->Synthesize("no/such-voice", 175, -1, "Hello.");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(missing.status().message().find("no/such-voice"), std::string::npos);
  EXPECT_TRUE((*process)->Synthesize(kVoice, 175, -1, "Hello.").ok());
}

TEST(EspeakSynthProcess, ADataFolderWithoutEspeakDataFailsToStartWithTheLibrarysReason) {
  // An existing folder is taken as the data folder (a missing one falls back to the default).
  const std::filesystem::path empty = std::filesystem::temp_directory_path() /
                                      ("voxserve-espeak-empty-" + std::to_string(::getpid()));
  std::filesystem::create_directories(empty);
  auto process = EspeakSynthProcess::Start(empty.string());
  std::filesystem::remove_all(empty);
  EXPECT_EQ(process.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(process.status().message().find("failed to initialize"), std::string::npos)
      << process.status();
}

}  // namespace
}  // namespace voxserve::engine
