// The service's limits on what one request or stream may ask for: its text (max_input_chars,
// max_stream_input_chars) and the audio it makes (max_audio_seconds for a whole file,
// max_stream_audio_seconds for a stream), the same whatever the transport.
#include <string>

#include "core/error.h"
#include "session_test_support.h"

namespace voxserve::service {
namespace {

// At 8 kHz the fake engine's one sample per byte makes each 390-character sentence 0.04875 s
// of audio: 30 of them (1.46 s) pass a bound of 1 s at the 21st.
constexpr int kVoiceRate = 8000;
constexpr int kSentences = 30;

std::string Sentences(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) text += std::string(389, 'a' + i % 26) + ". ";
  return text;
}

ServiceOptions LimitOptions() {
  ServiceOptions options;
  options.engine.sample_rate = kVoiceRate;
  options.limits.max_input_chars = 20'000;
  return options;
}

bool IsOutputTooLong(const absl::Status& status) {
  return core::DetailOf(status).reason == core::ErrorReason::kOutputTooLong &&
         core::DetailOf(status).code == "output_too_long";
}

using RequestLimitsTest = ServiceTest;

TEST_F(RequestLimitsTest, AWholeFilePastMaxAudioSecondsEndsWithOutputTooLongAndNoAudio) {
  ServiceOptions options = LimitOptions();
  options.max_audio_seconds = 1;
  Start(options);
  auto sink = std::make_shared<RecordingSink>();
  Accept(Request(Sentences(kSentences)), sink);
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_TRUE(IsOutputTooLong(sink->status())) << sink->status();
  EXPECT_NE(sink->status().message().find("limits.max_audio_seconds (1 s)"), std::string::npos);
  EXPECT_TRUE(sink->chunks().empty());  // a whole file is all or nothing
  // Cut as the audio came, not after all of it: the 21st sentence passed the bound, and at most
  // pipeline_depth more had been queued behind it.
  EXPECT_LE(engine_->texts().size(), 21u + 2u);
  EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));  // the request ended for good
}

TEST_F(RequestLimitsTest, AStreamHasTheLargerStreamBound) {
  ServiceOptions options = LimitOptions();
  options.max_audio_seconds = 1;
  options.max_stream_audio_seconds = 2;
  Start(options);
  auto sink = std::make_shared<RecordingSink>();
  Accept(Request(Sentences(kSentences), /*streaming=*/true), sink);
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_TRUE(sink->status().ok()) << sink->status();
  EXPECT_EQ(engine_->texts().size(), static_cast<size_t>(kSentences));
}

TEST_F(RequestLimitsTest, AStreamPastItsBoundIsCutKeepingTheAudioWithinIt) {
  ServiceOptions options = LimitOptions();
  options.max_stream_audio_seconds = 1;
  Start(options);
  auto sink = std::make_shared<RecordingSink>();
  Accept(Request(Sentences(kSentences), /*streaming=*/true), sink);
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_TRUE(IsOutputTooLong(sink->status())) << sink->status();
  EXPECT_NE(sink->status().message().find("limits.max_stream_audio_seconds"), std::string::npos);
  EXPECT_FALSE(sink->chunks().empty());  // what was within the bound was sent as it came
  EXPECT_LE(sink->summary().audio_seconds, 1.0);
  EXPECT_GT(sink->summary().audio_seconds, 0.9);
}

class SessionLimitsTest : public SpeechSessionTest {
 protected:
  void SetUp() override { owner_.voice_rate = kVoiceRate; }
};

TEST_F(SessionLimitsTest, TheStreamBoundCoversAllOfAStreamsSentences) {
  ServiceOptions options = LimitOptions();
  options.max_stream_audio_seconds = 1;
  Start(options);
  auto session = Open();
  ASSERT_TRUE(session->AddText(Sentences(kSentences)).ok());
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  ASSERT_EQ(owner_.ends.size(), 1u);
  EXPECT_TRUE(IsOutputTooLong(owner_.ends[0].status)) << owner_.ends[0].status;
  // Each sentence alone is far below the bound: only their sum passes it, at the 21st.
  EXPECT_EQ(owner_.reports.size(), 20u);
  EXPECT_LE(owner_.ends[0].totals.audio_seconds, 1.0);
}

TEST_F(SessionLimitsTest, AWholeFileSessionHasTheWholeFileBound) {
  ServiceOptions options = LimitOptions();
  options.max_audio_seconds = 1;
  Start(options);
  SessionOptions whole = Options();
  whole.whole_text = true;
  whole.whole_file = true;
  auto session = Open(whole);
  ASSERT_TRUE(session->AddText(Sentences(kSentences)).ok());
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  EXPECT_TRUE(IsOutputTooLong(owner_.ends[0].status)) << owner_.ends[0].status;
  EXPECT_NE(owner_.ends[0].status.message().find("limits.max_audio_seconds"), std::string::npos);
}

TEST_F(SessionLimitsTest, AWholeTextSessionChecksItsTextAsARequestsBeforeSpeaking) {
  Start();
  struct Case {
    std::string text;
    absl::StatusCode code;
    std::string error_code;
  };
  for (const Case& c :
       {Case{std::string(4097, 'a'), absl::StatusCode::kInvalidArgument, "payload_too_large"},
        Case{"", absl::StatusCode::kInvalidArgument, "empty_input"},
        Case{" \n ", absl::StatusCode::kInvalidArgument, "empty_input"},
        Case{"...", absl::StatusCode::kInvalidArgument, "empty_input"}}) {
    SessionOptions whole = Options();
    whole.whole_text = true;
    auto session = Open(whole);
    absl::Status status = session->AddText(c.text);
    EXPECT_EQ(status.code(), c.code) << c.text.size();
    EXPECT_EQ(core::DetailOf(status).code, c.error_code) << status;
    EXPECT_EQ(core::DetailOf(status).param, "text");
    EXPECT_FALSE(session->HasUnspokenText());  // unchanged: nothing queued, nothing spoken
  }
  EXPECT_TRUE(engine_->texts().empty());
}

TEST_F(SessionLimitsTest, AnIncrementalStreamMayHoldMaxStreamInputCharsInAll) {
  ServiceOptions options;
  options.limits.max_stream_input_chars = 20;
  Start(options);
  owner_.voice_rate = 16000;
  auto session = Open();
  ASSERT_TRUE(session->AddText("Hello there. ").ok());  // 13
  // A character cut between two pieces counts once: 14, 15.
  ASSERT_TRUE(session->AddText("\xE4\xBD").ok());
  ASSERT_TRUE(session->AddText("\xA0\xE4\xBD\xA0").ok());
  absl::Status refused = session->AddText("How are you");  // 15 + 11 > 20
  EXPECT_TRUE(absl::IsInvalidArgument(refused)) << refused;
  EXPECT_EQ(core::DetailOf(refused).reason, core::ErrorReason::kPayloadTooLarge);
  EXPECT_EQ(core::DetailOf(refused).param, "text");
  EXPECT_NE(refused.message().find("limits.max_stream_input_chars"), std::string::npos);
  ASSERT_TRUE(session->AddText("Bye.").ok());  // 19: still within
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  EXPECT_TRUE(owner_.ends[0].status.ok()) << owner_.ends[0].status;
  ASSERT_EQ(owner_.reports.size(), 2u);  // the refused piece never reached a sentence
  EXPECT_EQ(owner_.reports[1].text,
            "\xE4\xBD\xA0\xE4\xBD\xA0"
            "Bye.");
}

TEST_F(SessionLimitsTest, AStreamsSentencesAreHeldToTheStreamsLimitNotToOneRequests) {
  ServiceOptions options;
  options.limits.max_input_chars = 16;
  Start(options);
  owner_.voice_rate = 16000;
  auto session = Open();
  ASSERT_TRUE(session->AddText("This sentence is longer than sixteen characters.").ok());
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  EXPECT_TRUE(owner_.ends[0].status.ok()) << owner_.ends[0].status;
  EXPECT_EQ(owner_.reports.size(), 1u);
}

}  // namespace
}  // namespace voxserve::service
