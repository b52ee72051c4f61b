// VoiceRegistry through TtsService: registration runs the cloner off the caller's thread, every
// refusal stores nothing, cloned voices are listed and resolved by synthesis.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <future>

#include "core/error.h"
#include "service_test_support.h"
#include "support/temp_dir.h"
#include "support/wav_bytes.h"

namespace voxserve::service {
namespace {

using test_support::WavBytes;

class VoiceRegistryTest : public ServiceTest {
 protected:
  void StartWithVoices(bool test_cloner = true, size_t max_upload_bytes = 20 << 20) {
    ServiceOptions options;
    options.voices.dir = dir_.path() + "/voices";
    options.voices.test_cloner = test_cloner;
    options.voices.max_upload_bytes = max_upload_bytes;
    Start(options);
    ASSERT_TRUE(load_status_.ok()) << load_status_;
  }

  absl::StatusOr<store::StoredVoice> Register(std::string name, std::string audio,
                                              std::string model = "fake") {
    VoiceRegistration registration;
    registration.model = std::move(model);
    registration.name = std::move(name);
    registration.transcript = "hello world";
    registration.audio = std::move(audio);
    std::promise<absl::StatusOr<store::StoredVoice>> promise;
    service_->voices().Register(std::move(registration),
                                [&promise](absl::StatusOr<store::StoredVoice> stored) {
                                  promise.set_value(std::move(stored));
                                });
    auto future = promise.get_future();
    EXPECT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready);
    return future.get();
  }

  size_t FilesOnDisk() const {
    size_t count = 0;
    for ([[maybe_unused]] const auto& entry :
         std::filesystem::directory_iterator(dir_.path() + "/voices")) {
      ++count;
    }
    return count;
  }

  test_support::TempDir dir_;
};

TEST_F(VoiceRegistryTest, RegistersListsAndDeletesAVoice) {
  StartWithVoices();
  auto stored = Register("Alice Clone", WavBytes(2.0));
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->metadata.model, "fake");
  EXPECT_EQ(stored->metadata.family, "test");
  EXPECT_EQ(stored->metadata.transcript, "hello world");
  EXPECT_NEAR(stored->metadata.prompt_seconds, 2.0, 1e-3);
  EXPECT_EQ(FilesOnDisk(), 1u);

  auto profile = service_->voices().LoadProfile(stored->metadata.id);
  ASSERT_TRUE(profile.ok());
  EXPECT_EQ((*profile)->tensors.at("prompt_speech_tokens").ints.size(), 50u);  // 25 per second

  bool listed = false;
  for (const VoiceListing& voice : service_->ListVoices({"fake", ""})) {
    if (voice.id != stored->metadata.id) continue;
    listed = true;
    EXPECT_TRUE(voice.cloned);
    EXPECT_EQ(voice.name, "Alice Clone");
    EXPECT_EQ(voice.sample_rate, 16000);
  }
  EXPECT_TRUE(listed);
  EXPECT_EQ(service_->voices().List("fake").size(), 1u);
  EXPECT_TRUE(service_->voices().List("other").empty());

  ASSERT_TRUE(service_->voices().Delete(stored->metadata.id).ok());
  EXPECT_EQ(service_->voices().Get(stored->metadata.id).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(FilesOnDisk(), 0u);
}

// Synthesis reads a cloned voice's profile on the I/O thread: after the first request it comes
// from memory (the file is not read again), and a deleted voice's profile is gone at once.
TEST_F(VoiceRegistryTest, ProfilesAreReadOnceAndForgottenWhenDeleted) {
  StartWithVoices();
  auto stored = Register("Cached", WavBytes(1.0));
  ASSERT_TRUE(stored.ok()) << stored.status();
  const std::string id = stored->metadata.id;
  auto first = service_->voices().LoadProfile(id);
  ASSERT_TRUE(first.ok()) << first.status();
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path() + "/voices")) {
    std::ofstream(entry.path(), std::ios::binary | std::ios::trunc) << "not a voice file";
  }
  auto again = service_->voices().LoadProfile(id);
  ASSERT_TRUE(again.ok()) << "read from disk again: " << again.status();
  EXPECT_EQ(again->get(), first->get());  // the same profile object, shared
  ASSERT_TRUE(service_->voices().Delete(id).ok());
  EXPECT_EQ(service_->voices().LoadProfile(id).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(VoiceRegistryTest, BadUploadsAreRefusedWithTheirOwnCodeAndStoreNothing) {
  StartWithVoices(true, /*max_upload_bytes=*/200'000);
  struct Case {
    std::string what;
    std::string audio;
    std::string name;
    std::string model;
    absl::StatusCode code;
  };
  const std::string wav = WavBytes(1.0);
  std::vector<Case> cases = {
      {"not audio", std::string(2000, 'x'), "a", "fake", absl::StatusCode::kInvalidArgument},
      {"truncated", wav.substr(0, 44), "a", "fake", absl::StatusCode::kInvalidArgument},
      {"silent", WavBytes(1.0, 16000, 0.0), "a", "fake", absl::StatusCode::kInvalidArgument},
      {"too long", WavBytes(31.0, 2000), "a", "fake", absl::StatusCode::kOutOfRange},
      {"too large", WavBytes(7.0), "a", "fake", absl::StatusCode::kInvalidArgument},
      {"empty", "", "a", "fake", absl::StatusCode::kInvalidArgument},
      {"path in name", wav, "../x", "fake", absl::StatusCode::kInvalidArgument},
      {"unknown model", wav, "a", "nope", absl::StatusCode::kNotFound},
  };
  for (const Case& c : cases) {
    auto stored = Register(c.name, c.audio, c.model);
    EXPECT_EQ(stored.status().code(), c.code) << c.what << ": " << stored.status();
  }
  EXPECT_EQ(core::DetailOf(Register("a", WavBytes(7.0)).status()).reason,
            core::ErrorReason::kPayloadTooLarge);
  EXPECT_TRUE(service_->voices().List().empty());
  EXPECT_EQ(FilesOnDisk(), 0u);
}

TEST_F(VoiceRegistryTest, ADuplicateNameIsAConflict) {
  StartWithVoices();
  ASSERT_TRUE(Register("Narrator", WavBytes(1.0)).ok());
  auto again = Register("narrator", WavBytes(1.5));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(FilesOnDisk(), 1u);
}

TEST_F(VoiceRegistryTest, AModelThatCannotCloneSaysSo) {
  StartWithVoices(/*test_cloner=*/false);
  auto stored = Register("a", WavBytes(1.0));
  EXPECT_EQ(stored.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(stored.status()).code, "model_cannot_clone");
  EXPECT_NE(stored.status().message().find("cannot clone voices"), std::string::npos);
  EXPECT_EQ(FilesOnDisk(), 0u);
}

TEST_F(VoiceRegistryTest, CloningIsOffWithoutAVoicesDirectory) {
  Start();
  auto stored = Register("a", WavBytes(1.0));
  EXPECT_EQ(stored.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(stored.status().message().find("voices.dir"), std::string::npos);
  EXPECT_TRUE(service_->voices().List().empty());
}

TEST_F(VoiceRegistryTest, ACallerLimitedToOtherModelsIsRefused) {
  StartWithVoices();
  VoiceRegistration registration;
  registration.model = "fake";
  registration.name = "a";
  registration.audio = WavBytes(1.0);
  registration.allowed_models = {"espeak"};
  absl::Status status;
  service_->voices().Register(std::move(registration), [&status](auto stored) {
    status = stored.status();
  });  // refused before any work: done runs before Register returns
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(VoiceRegistryTest, SynthesisResolvesACloneByIdOrNameToItsProfile) {
  StartWithVoices();
  auto stored = Register("My Voice", WavBytes(1.0));
  ASSERT_TRUE(stored.ok());
  for (const std::string& voice : {stored->metadata.id, std::string("my voice")}) {
    SynthesisRequest request = Request("Hello.");
    request.voice = voice;
    auto job = service_->Synthesize(request, std::make_shared<RecordingSink>());
    // FakeEngine takes no profiles: the clear refusal names the voice and the missing part.
    ASSERT_FALSE(job.ok()) << voice;
    EXPECT_EQ(job.status().code(), absl::StatusCode::kUnimplemented);
    EXPECT_NE(job.status().message().find(stored->metadata.id), std::string::npos);
  }
  // Engine voices are untouched.
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request("Hello."), sink);
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_TRUE(sink->status().ok());
}

// An inline prompt (ref_audio) is cloned off the caller's thread, stored nowhere, and every
// outcome reaches the sink exactly once: FakeEngine takes no profiles, so a good prompt ends in
// the same 501 as a registered voice; a bad one in a 400 naming ref_audio.
TEST_F(VoiceRegistryTest, AnInlinePromptIsClonedForTheRequestAndEndsThroughTheSink) {
  StartWithVoices();
  struct Case {
    std::string audio;
    absl::StatusCode code;
    std::string param;
  };
  for (const Case& c :
       {Case{WavBytes(1.0), absl::StatusCode::kUnimplemented, ""},
        Case{std::string(3000, 'x'), absl::StatusCode::kInvalidArgument, "ref_audio"}}) {
    SynthesisRequest request = Request("Hello.");
    request.voice.clear();
    request.prompt_audio = c.audio;
    request.prompt_text = "hello world";
    auto sink = std::make_shared<RecordingSink>();
    std::shared_ptr<PendingJob> pending = service_->SynthesizeWithPrompt(request, sink);
    ASSERT_NE(pending, nullptr);
    ASSERT_TRUE(sink->WaitComplete());
    EXPECT_EQ(sink->status().code(), c.code) << sink->status();
    EXPECT_EQ(core::DetailOf(sink->status()).param, c.param) << sink->status();
    EXPECT_TRUE(sink->chunks().empty());
    EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));  // the cloning left the count
    EXPECT_EQ(sink->completions(), 1);
  }
  EXPECT_EQ(FilesOnDisk(), 0u);
  EXPECT_TRUE(service_->voices().List().empty());
  // Refused before cloning: what the request itself gets wrong, and a model that cannot clone.
  SynthesisRequest empty = Request("");
  empty.prompt_audio = WavBytes(1.0);
  auto sink = std::make_shared<RecordingSink>();
  service_->SynthesizeWithPrompt(empty, sink);
  EXPECT_EQ(sink->completions(), 1);  // at once, on this thread
  EXPECT_EQ(sink->status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(VoiceRegistryTest, ConcurrentRegistrationsOfOneNameStoreItOnce) {
  StartWithVoices();
  constexpr int kAttempts = 8;
  std::vector<std::promise<absl::StatusOr<store::StoredVoice>>> promises(kAttempts);
  for (int i = 0; i < kAttempts; ++i) {
    VoiceRegistration registration;
    registration.model = "fake";
    registration.name = "Same";
    registration.audio = WavBytes(0.5 + 0.1 * i);
    service_->voices().Register(std::move(registration),
                                [&promises, i](auto stored) { promises[i].set_value(stored); });
  }
  int ok = 0, conflicts = 0, busy = 0;
  for (auto& promise : promises) {
    auto result = promise.get_future().get();
    if (result.ok()) ++ok;
    if (result.status().code() == absl::StatusCode::kAlreadyExists) ++conflicts;
    if (result.status().code() == absl::StatusCode::kResourceExhausted) ++busy;
  }
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(ok + conflicts + busy, kAttempts);
  EXPECT_EQ(FilesOnDisk(), 1u);
}

}  // namespace
}  // namespace voxserve::service
