// EspeakSynthProcess: every synthesis starts from the same state (issue 29) without a process
// start per request (issue 38): a kept speaker per voice, its library data put back each time;
// what it cannot put back replaces the speaker; a template or speaker that dies is replaced;
// callers on several threads speak at once.
#include "engine/espeak/espeak_synth_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

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

struct Spoken {
  const char* voice;
  int rate;
  int pitch;
  const char* text;
};

// Klatt and breathy variants (rand()), another language, a rate, a pitch, and a German text with
// English words (a second translator the library keeps: the speaker is replaced after it).
const std::vector<Spoken>& Mixed() {
  static const std::vector<Spoken> mixed = {
      {kVoice, 175, -1, "The quick brown fox jumps over the lazy dog."},
      {"roa/fr", 175, -1, "Bonjour, comment allez-vous? Très bien."},
      {"gmw/en-US+klatt", 175, -1, "Breathy klatt voice, one two three."},
      {kVoice, 120, 80, "Slow and high: the quick brown fox."},
      {"gmw/de", 175, -1, "Guten Tag. Computer und Software sind hier."},
      {"gmw/en-US+whisper", 250, -1, "A whisper, fast."},
  };
  return mixed;
}

// Each of Mixed() spoken by a process of its own, which spoke nothing before it.
void SpeakEachInAFreshProcess(std::vector<std::vector<float>>* fresh) {
  for (const Spoken& one : Mixed()) {
    auto process = EspeakSynthProcess::Start("");
    ASSERT_TRUE(process.ok()) << process.status();
    auto output = (*process)->Synthesize(one.voice, one.rate, one.pitch, one.text);
    ASSERT_TRUE(output.ok()) << one.voice << ": " << output.status();
    ASSERT_FALSE(output->samples.empty());
    fresh->push_back(std::move(output->samples));
  }
}

TEST(EspeakSynthProcess, AnyOrderOfRequestsGivesWhatAFreshProcessGivesForEach) {
  std::vector<std::vector<float>> fresh;
  ASSERT_NO_FATAL_FAILURE(SpeakEachInAFreshProcess(&fresh));
  auto process = EspeakSynthProcess::Start("");
  ASSERT_TRUE(process.ok()) << process.status();
  // Every request after every other one, each voice's speaker kept between them: more voices
  // than speakers, so some are forked again.
  const size_t n = Mixed().size();
  for (size_t round = 0; round < 3; ++round) {
    for (size_t i = 0; i < n; ++i) {
      const size_t k = (i * (round + 2) + round) % n;
      const Spoken& one = Mixed()[k];
      auto output = (*process)->Synthesize(one.voice, one.rate, one.pitch, one.text);
      ASSERT_TRUE(output.ok()) << one.voice << ": " << output.status();
      EXPECT_EQ(output->samples, fresh[k])
          << "round " << round << ", " << one.voice << ": " << one.text;
    }
  }
}

TEST(EspeakSynthProcess, AVoicesRequestsAreSpokenByOneKeptProcessNotAForkEach) {
  auto process = EspeakSynthProcess::Start("");
  ASSERT_TRUE(process.ok()) << process.status();
  auto first = (*process)->Synthesize(kVoice, 175, -1, "One.");
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_GT(first->speaker, 0);
  EXPECT_NE(first->speaker, (*process)->pid());
  for (const char* text : {"Two.", "Three, four.", "One."}) {
    auto next = (*process)->Synthesize(kVoice, 175, -1, text);
    ASSERT_TRUE(next.ok()) << next.status();
    EXPECT_EQ(next->speaker, first->speaker) << "a process per request came back";
  }
  auto other = (*process)->Synthesize("roa/fr", 175, -1, "Un.");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NE(other->speaker, first->speaker);
  auto back = (*process)->Synthesize(kVoice, 175, -1, "One.");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->speaker, first->speaker) << "the voice's speaker is kept beside another's";
  EXPECT_EQ(back->samples, first->samples);
}

TEST(EspeakSynthProcess, ATextThatLeavesLibraryMemoryBehindReplacesItsSpeakerAndSpeaksTheSame) {
  auto process = EspeakSynthProcess::Start("");
  ASSERT_TRUE(process.ok()) << process.status();
  constexpr const char* kGermanWithEnglish = "Guten Tag. Computer und Software sind hier.";
  auto plain = (*process)->Synthesize("gmw/de", 175, -1, "Guten Tag.");
  ASSERT_TRUE(plain.ok()) << plain.status();
  auto first = (*process)->Synthesize("gmw/de", 175, -1, kGermanWithEnglish);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->speaker, plain->speaker);
  auto again = (*process)->Synthesize("gmw/de", 175, -1, kGermanWithEnglish);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NE(again->speaker, first->speaker) << "the speaker that kept memory was not replaced";
  EXPECT_EQ(again->samples, first->samples);
  auto plain_again = (*process)->Synthesize("gmw/de", 175, -1, "Guten Tag.");
  ASSERT_TRUE(plain_again.ok()) << plain_again.status();
  EXPECT_EQ(plain_again->samples, plain->samples);
}

TEST(EspeakSynthProcess, ASpeakerKilledBetweenRequestsIsReplacedAndSpeaksTheSame) {
  auto process = EspeakSynthProcess::Start("");
  ASSERT_TRUE(process.ok()) << process.status();
  auto before = (*process)->Synthesize(kVoice, 175, -1, "Still here.");
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(::kill(before->speaker, SIGKILL), 0);
  auto after = (*process)->Synthesize(kVoice, 175, -1, "Still here.");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_NE(after->speaker, before->speaker);
  EXPECT_EQ(after->samples, before->samples);
}

// The template only forks: the speakers it handed over go on without it, and the next fork
// starts a new one.
TEST(EspeakSynthProcess, ATemplateThatDiedIsReplacedWhenASpeakerIsNeededAndKeptSpeakersGoOn) {
  auto process = EspeakSynthProcess::Start("");
  ASSERT_TRUE(process.ok()) << process.status();
  auto before = (*process)->Synthesize(kVoice, 175, -1, "Still here.");
  ASSERT_TRUE(before.ok()) << before.status();
  const pid_t old_pid = (*process)->pid();
  ASSERT_GT(old_pid, 0);
  ASSERT_EQ(::kill(old_pid, SIGKILL), 0);
  auto kept = (*process)->Synthesize(kVoice, 175, -1, "Still here.");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->speaker, before->speaker);
  EXPECT_EQ(kept->samples, before->samples);
  auto fresh = EspeakSynthProcess::Start("");
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  auto expected = (*fresh)->Synthesize("roa/fr", 175, -1, "Encore ici.");
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto forked = (*process)->Synthesize("roa/fr", 175, -1, "Encore ici.");
  ASSERT_TRUE(forked.ok()) << forked.status();
  EXPECT_NE((*process)->pid(), old_pid);
  EXPECT_EQ(forked->samples, expected->samples);
}

// PR_SET_PDEATHSIG fires when the *thread* that spawned a process ends: a template bound to it
// died with the server's loading thread, and the first request paid a restart (issue 38).
TEST(EspeakSynthProcess, ATemplateStartedOnAThreadThatHasEndedStaysAlive) {
  absl::StatusOr<std::unique_ptr<EspeakSynthProcess>> process;
  std::thread loader([&] { process = EspeakSynthProcess::Start(""); });
  loader.join();
  ASSERT_TRUE(process.ok()) << process.status();
  const pid_t started = (*process)->pid();
  auto spoken = (*process)->Synthesize(kVoice, 175, -1, "Hello.");
  ASSERT_TRUE(spoken.ok()) << spoken.status();
  EXPECT_EQ((*process)->pid(), started) << "the template died with the thread that started it";
  EXPECT_EQ(::kill(started, 0), 0);
}

// Callers on several threads at once each get their own speakers, and the bytes a fresh process
// gives: the lanes share nothing but the template.
TEST(EspeakSynthProcess, CallersOnSeveralThreadsAtOnceGetWhatAFreshProcessGives) {
  std::vector<std::vector<float>> fresh;
  ASSERT_NO_FATAL_FAILURE(SpeakEachInAFreshProcess(&fresh));
  auto process = EspeakSynthProcess::Start("");
  ASSERT_TRUE(process.ok()) << process.status();
  constexpr int kThreads = 4;
  const size_t n = Mixed().size();
  std::vector<std::vector<std::string>> mismatches(kThreads);
  std::vector<std::thread> callers;
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([&, t] {
      for (size_t i = 0; i < 2 * n; ++i) {
        const size_t k = (i + static_cast<size_t>(t)) % n;
        const Spoken& one = Mixed()[k];
        auto output = (*process)->Synthesize(one.voice, one.rate, one.pitch, one.text);
        if (!output.ok()) {
          mismatches[t].push_back(std::string(output.status().message()));
        } else if (output->samples != fresh[k]) {
          mismatches[t].push_back(std::string(one.voice) + ": " + one.text);
        }
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(mismatches[t].empty()) << "thread " << t << ": " << mismatches[t].front();
  }
}

// A hang in the library (a stopped speaker here) costs that request, not the caller's thread;
// the voice's next request is spoken by a new speaker, as before.
TEST(EspeakSynthProcess, ASpeakerSilentPastTheTimeoutIsKilledAndThatRequestFails) {
  auto process = EspeakSynthProcess::Start("", std::chrono::milliseconds(300));
  ASSERT_TRUE(process.ok()) << process.status();
  auto before = (*process)->Synthesize(kVoice, 175, -1, "Still here.");
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(::kill(before->speaker, SIGSTOP), 0);
  auto stalled = (*process)->Synthesize(kVoice, 175, -1, "Still here.");
  EXPECT_EQ(stalled.status().code(), absl::StatusCode::kDeadlineExceeded) << stalled.status();
  EXPECT_NE(stalled.status().message().find("synthesis_timeout_ms"), std::string::npos);
  auto after = (*process)->Synthesize(kVoice, 175, -1, "Still here.");
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_NE(after->speaker, before->speaker);
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
