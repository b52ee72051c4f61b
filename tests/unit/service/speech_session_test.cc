// SpeechSession: incremental text → sentences spoken one after another, the waiting queue, flush,
// end, drain, abort, the empty-sentence rule, totals, and exactly one end.
#include "service/speech_session.h"

#include "core/error.h"
#include "session_test_support.h"

namespace voxserve::service {
namespace {

std::string CodeOf(const absl::Status& status) { return core::DetailOf(status).code; }

TEST_F(SpeechSessionTest, SpeaksSentencesInOrderEachOnesAudioBeforeItsReportThenEndsOnce) {
  Start();
  auto session = Open();
  ASSERT_TRUE(session->AddText("Alpha one. Bravo two. Charlie three.").ok());
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());

  EXPECT_EQ(owner_.Log(), (std::vector<std::string>{"audio", "done 0", "audio", "done 1", "audio",
                                                    "done 2", "end"}));
  ASSERT_EQ(owner_.reports.size(), 3u);
  EXPECT_EQ(owner_.reports[0].text, "Alpha one.");
  EXPECT_EQ(owner_.reports[1].text, "Bravo two.");
  EXPECT_EQ(owner_.reports[2].text, "Charlie three.");
  // Each sentence's audio is its own: the engine's level for its first letter, and only that.
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(SegmentLevels(owner_.sentence_audio[i]),
              std::vector<int16_t>{LevelOf(owner_.reports[i].text[0])})
        << i;
    EXPECT_EQ(owner_.reports[i].index, static_cast<int>(i));
    EXPECT_EQ(owner_.reports[i].audio_bytes, owner_.sentence_audio[i].size());
  }
  EXPECT_EQ(engine_->texts(),
            (std::vector<std::string>{"Alpha one.", "Bravo two.", "Charlie three."}));

  const SessionEnd& end = owner_.ends.front();
  EXPECT_TRUE(end.status.ok()) << end.status;
  EXPECT_EQ(end.totals.segments, 3);
  EXPECT_EQ(end.totals.input_chars, 10u + 10u + 14u);
  EXPECT_EQ(end.totals.model, "fake");
  EXPECT_EQ(end.totals.voice, "alice");
  double audio_seconds = 0;
  for (const SentenceReport& report : owner_.reports) audio_seconds += report.summary.audio_seconds;
  EXPECT_DOUBLE_EQ(end.totals.audio_seconds, audio_seconds);
  EXPECT_GT(end.totals.audio_seconds, 0);
  ASSERT_TRUE(end.totals.time_to_first_audio_seconds.has_value());
  EXPECT_LE(*end.totals.time_to_first_audio_seconds, end.totals.total_seconds);

  // Exactly once: nothing later ends it again.
  session->Abort(absl::CancelledError("late"));
  session->Drain();
  EXPECT_EQ(owner_.ends.size(), 1u);
  EXPECT_TRUE(session->Ended());
}

TEST_F(SpeechSessionTest, TextIsHeldUntilItsSentenceIsCompleteAndFlushSpeaksTheRest) {
  Start();
  auto session = Open();
  ASSERT_TRUE(session->AddText("Alpha o").ok());
  ASSERT_TRUE(session->AddText("ne.").ok());  // the next word may still join it ("Mr. Smith")
  EXPECT_FALSE(session->Busy());
  EXPECT_TRUE(session->HasUnspokenText());
  ASSERT_TRUE(session->AddText(" Bravo tw").ok());  // a letter follows: "Alpha one." is final
  EXPECT_TRUE(session->Busy());
  ASSERT_TRUE(owner_.RunUntil([&] { return owner_.reports.size() == 1; }));
  EXPECT_EQ(owner_.reports[0].text, "Alpha one.");
  EXPECT_FALSE(session->Busy());

  ASSERT_TRUE(session->Flush().ok());  // the unfinished sentence, as it is
  ASSERT_TRUE(owner_.RunUntil([&] { return owner_.reports.size() == 2; }));
  EXPECT_EQ(owner_.reports[1].text, "Bravo tw");
  EXPECT_TRUE(owner_.ends.empty());  // a flush is not an end
  EXPECT_TRUE(session->TakesText());
  EXPECT_FALSE(session->HasUnspokenText());
}

TEST_F(SpeechSessionTest, TheNextSentenceStartsOnlyOnceThePreviousOneHasCompleted) {
  Start();
  engine_->CloseGate();
  auto session = Open();
  ASSERT_TRUE(session->AddText("Alpha one. Bravo two. Charlie three. ").ok());
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(engine_->WaitForCalls(1));
  engine_->ReleaseOne();
  // Alpha's completion is posted, not yet run: Bravo must not have reached the engine.
  ASSERT_TRUE(owner_.WaitForPostedTask());
  EXPECT_EQ(engine_->calls().size(), 1u);
  ASSERT_TRUE(owner_.RunUntil([&] { return owner_.reports.size() == 1; }));
  ASSERT_TRUE(engine_->WaitForCalls(2));
  EXPECT_EQ(engine_->texts().back(), "Bravo two.");
  engine_->OpenGate();
  ASSERT_TRUE(owner_.RunUntilEnded());
  EXPECT_EQ(owner_.reports.size(), 3u);
}

TEST_F(SpeechSessionTest, TheWaitingQueueIsBoundedSoTheOwnerStopsReading) {
  Start();
  engine_->CloseGate();
  auto session = Open();
  std::string text;
  for (int i = 0; i < 18; ++i) text += "This is sentence " + std::to_string(i) + ". ";
  // 18 sentences, the last held for a following letter: 1 running + 16 waiting.
  ASSERT_TRUE(session->AddText(text).ok());
  EXPECT_TRUE(session->Backlogged());
  ASSERT_TRUE(engine_->WaitForCalls(1));
  engine_->ReleaseOne();
  ASSERT_TRUE(owner_.RunUntil([&] { return owner_.reports.size() == 1; }));
  EXPECT_FALSE(session->Backlogged());  // the next one started: 15 wait
  engine_->OpenGate();
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  EXPECT_EQ(owner_.reports.size(), 18u);
  EXPECT_TRUE(owner_.ends.front().status.ok());
}

TEST_F(SpeechSessionTest, AbortMidSentenceCancelsItDropsTheQueueAndEndsOnceAfterIt) {
  Start();
  engine_->CloseGate();
  auto session = Open();
  ASSERT_TRUE(session->AddText("Alpha one. Bravo two. Charlie three. ").ok());
  ASSERT_TRUE(engine_->WaitForCalls(1));
  session->Abort(absl::CancelledError("the client went away"));
  EXPECT_TRUE(owner_.ends.empty());  // the running sentence has not completed yet
  EXPECT_FALSE(session->TakesText());
  engine_->OpenGate();
  ASSERT_TRUE(owner_.RunUntilEnded());
  EXPECT_EQ(owner_.ends.front().status.code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(owner_.reports.empty());  // a cancelled sentence is not reported as spoken
  EXPECT_TRUE(service_->WaitIdle(milliseconds(5000)));
  EXPECT_EQ(engine_->texts(), std::vector<std::string>{"Alpha one."});
  session->Abort(absl::CancelledError("again"));
  EXPECT_EQ(owner_.ends.size(), 1u);
}

TEST_F(SpeechSessionTest, AbortWithNothingRunningEndsAtOnce) {
  Start();
  auto session = Open();
  ASSERT_TRUE(session->AddText("Held for more").ok());
  session->Abort(core::InvalidArgument("bad message", {}, "invalid_json"));
  ASSERT_EQ(owner_.ends.size(), 1u);
  EXPECT_EQ(CodeOf(owner_.ends.front().status), "invalid_json");
  EXPECT_TRUE(engine_->texts().empty());
}

TEST_F(SpeechSessionTest, ASentenceWithNothingSpeakableIsSkippedNotAnError) {
  Start();
  auto session = Open();
  ASSERT_TRUE(session->AddText("...").ok());
  ASSERT_TRUE(session->Flush().ok());  // a "sentence" of punctuation alone
  EXPECT_TRUE(owner_.ends.empty());
  EXPECT_TRUE(session->TakesText());
  ASSERT_TRUE(session->AddText("Alpha one.").ok());
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  ASSERT_EQ(owner_.reports.size(), 1u);
  EXPECT_EQ(owner_.reports[0].index, 0);  // skipped sentences take no index
  EXPECT_EQ(owner_.reports[0].text, "Alpha one.");
  EXPECT_TRUE(owner_.ends.front().status.ok()) << owner_.ends.front().status;
}

TEST_F(SpeechSessionTest, AStreamWithTextButNothingSpeakableEndsWithEmptyInput) {
  Start();
  auto session = Open();
  ASSERT_TRUE(session->AddText("... ").ok());
  ASSERT_TRUE(session->Flush().ok());
  ASSERT_TRUE(session->AddText("!!!").ok());
  ASSERT_TRUE(session->End().ok());
  ASSERT_EQ(owner_.ends.size(), 1u);
  const absl::Status& status = owner_.ends.front().status;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CodeOf(status), "empty_input");
  EXPECT_EQ(core::DetailOf(status).param, "text");
  EXPECT_TRUE(owner_.reports.empty());
  EXPECT_TRUE(engine_->texts().empty());
}

TEST_F(SpeechSessionTest, AStreamWithoutTextEndsWithAnEmptySummary) {
  Start();
  auto session = Open();
  ASSERT_TRUE(session->End().ok());
  ASSERT_EQ(owner_.ends.size(), 1u);
  EXPECT_TRUE(owner_.ends.front().status.ok());
  EXPECT_EQ(owner_.ends.front().totals.segments, 0);
  EXPECT_FALSE(session->End().ok());  // no text after the end
  EXPECT_FALSE(session->AddText("Late.").ok());
}

TEST_F(SpeechSessionTest, DrainFinishesTheRunningSentenceAndSaysWhatWasDropped) {
  Start();
  engine_->CloseGate();
  auto session = Open();
  ASSERT_TRUE(session->AddText("Alpha one. Bravo two. Charlie").ok());
  ASSERT_TRUE(engine_->WaitForCalls(1));
  session->Drain();
  EXPECT_TRUE(owner_.ends.empty());
  engine_->OpenGate();
  ASSERT_TRUE(owner_.RunUntilEnded());
  ASSERT_EQ(owner_.reports.size(), 1u);  // Alpha finished; Bravo never started
  const SessionEnd& end = owner_.ends.front();
  EXPECT_EQ(core::DetailOf(end.status).reason, core::ErrorReason::kDraining);
  EXPECT_TRUE(end.dropped_text);
  EXPECT_EQ(end.totals.segments, 1);
  EXPECT_EQ(engine_->texts(), std::vector<std::string>{"Alpha one."});
}

TEST_F(SpeechSessionTest, DrainOfAnIdleStreamEndsAtOnceWithNothingDropped) {
  Start();
  auto session = Open();
  session->Drain();
  ASSERT_EQ(owner_.ends.size(), 1u);
  EXPECT_FALSE(owner_.ends.front().dropped_text);
}

TEST_F(SpeechSessionTest, AFailedSentenceEndsTheSessionWithItsErrorAndNothingAfterItIsSpoken) {
  ServiceOptions options;
  options.engine.fail_marker = "FAIL";
  Start(options);
  auto session = Open();
  ASSERT_TRUE(session->AddText("Alpha one. FAIL two. Charlie three.").ok());
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  EXPECT_EQ(owner_.reports.size(), 1u);
  EXPECT_FALSE(owner_.ends.front().status.ok());
  EXPECT_EQ(engine_->texts(), (std::vector<std::string>{"Alpha one.", "FAIL two."}));
}

TEST_F(SpeechSessionTest, DestroyingTheSessionMidSentenceCancelsItAndDropsItsCompletion) {
  Start();
  engine_->CloseGate();
  auto session = Open();
  ASSERT_TRUE(session->AddText("Alpha one. Bravo two. ").ok());
  ASSERT_TRUE(engine_->WaitForCalls(1));
  session.reset();
  engine_->OpenGate();
  EXPECT_TRUE(service_->WaitIdle(milliseconds(5000)));
  ASSERT_TRUE(owner_.WaitForPostedTask());
  EXPECT_EQ(owner_.RunPosted(), 1);  // the cancelled sentence's completion: dropped
  EXPECT_TRUE(owner_.reports.empty());
  EXPECT_TRUE(owner_.ends.empty());
}

struct BadConfig {
  const char* name;
  std::function<void(SessionOptions&)> change;
  absl::StatusCode code;
  const char* error_code;
};

class SpeechSessionConfigTest : public SpeechSessionTest,
                                public ::testing::WithParamInterface<BadConfig> {};

TEST_P(SpeechSessionConfigTest, IsRefusedBeforeAnyText) {
  Start();
  SessionOptions options = Options();
  GetParam().change(options);
  auto session = SpeechSession::Create(*service_, std::move(options), owner_, owner_.Post());
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), GetParam().code) << session.status();
  EXPECT_EQ(CodeOf(session.status()), GetParam().error_code) << session.status();
  EXPECT_TRUE(owner_.ends.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Configs, SpeechSessionConfigTest,
    ::testing::Values(
        BadConfig{"SpeedTooHigh", [](SessionOptions& o) { o.request.speed = 9; },
                  absl::StatusCode::kInvalidArgument, "invalid_speed"},
        BadConfig{"TimeoutZero", [](SessionOptions& o) { o.request.timeout = milliseconds(0); },
                  absl::StatusCode::kInvalidArgument, "invalid_timeout"},
        BadConfig{"TimeoutAboveTheMaximum",
                  [](SessionOptions& o) { o.request.timeout = std::chrono::hours(1); },
                  absl::StatusCode::kInvalidArgument, "invalid_timeout"},
        BadConfig{"InstructionsTooLong",
                  [](SessionOptions& o) { o.request.instructions = std::string(4097, 'a'); },
                  absl::StatusCode::kInvalidArgument, "payload_too_large"},
        BadConfig{"UnknownVoice", [](SessionOptions& o) { o.request.voice = "carol"; },
                  absl::StatusCode::kNotFound, "voice_not_found"},
        BadConfig{"ModelNotAllowed",
                  [](SessionOptions& o) { o.request.allowed_models = {"other"}; },
                  absl::StatusCode::kPermissionDenied, "model_not_allowed"},
        BadConfig{"DeadlinePassed",
                  [](SessionOptions& o) { o.deadline = core::Clock::now() - milliseconds(1); },
                  absl::StatusCode::kDeadlineExceeded, "timeout"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(SpeechSessionTest, AnSsmlStreamIsHeldUntilTheEndAndSpokenAsOneDocument) {
  Start();
  SessionOptions options = Options();
  options.request.input_format = "ssml";
  auto session = Open(std::move(options));
  ASSERT_TRUE(session->AddText("One. <break ").ok());
  ASSERT_TRUE(session->AddText("time=\"1s\"/> Two.").ok());
  EXPECT_TRUE(engine_->texts().empty());  // a document cannot be cut before it is whole
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  ASSERT_TRUE(owner_.ends.front().status.ok()) << owner_.ends.front().status;
  EXPECT_EQ(engine_->texts(), (std::vector<std::string>{"One.", "Two."}));
  ASSERT_EQ(owner_.reports.size(), 1u);
  EXPECT_EQ(owner_.reports[0].text, "One. Two.");  // as spoken, markup gone
  EXPECT_DOUBLE_EQ(owner_.reports[0].summary.audio_seconds, (4 + 16000 + 4) / 16000.0);
}

TEST_F(SpeechSessionTest, ATextStreamStartingWithSpeakIsSsmlUnlessItSaysText) {
  Start();
  auto detected = Open();
  ASSERT_TRUE(detected->AddText("  ").ok());
  ASSERT_TRUE(detected->AddText("<speak>Hi <sub alias=\"there\">x</sub>.</speak>").ok());
  ASSERT_TRUE(detected->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  SessionOptions options = Options();
  options.request.input_format = "text";
  auto plain = Open(std::move(options));
  ASSERT_TRUE(plain->AddText("<speak>Hi.</speak>").ok());
  ASSERT_TRUE(plain->End().ok());
  ASSERT_TRUE(owner_.RunUntil([&] { return owner_.ends.size() == 2; }));
  EXPECT_EQ(engine_->texts(), (std::vector<std::string>{"Hi there.", "<speak>Hi.</speak>"}));
}

TEST_F(SpeechSessionTest, SsmlSplitAcrossTheFirstPiecesIsStillSsml) {
  // Issue 39: an LLM's token stream cuts tags anywhere. Spoken as markup before (4.9 s of
  // "less than speak greater than ...").
  Start();
  auto split = Open();
  for (const char* piece :
       {"<spe", "ak><prosody ra", "te=\"x-fast\">Hel", "lo</prosody></speak>"}) {
    ASSERT_TRUE(split->AddText(piece).ok());
  }
  ASSERT_TRUE(split->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  ASSERT_TRUE(owner_.ends.front().status.ok()) << owner_.ends.front().status;
  EXPECT_EQ(engine_->texts(), std::vector<std::string>{"Hello"});
  // The declaration may be split too, and spaces come first.
  auto declared = Open();
  for (const char* piece : {" ", "<?xml vers", "ion=\"1.0\"?>", "\n<", "speak", ">Hi.</speak>"}) {
    ASSERT_TRUE(declared->AddText(piece).ok());
  }
  ASSERT_TRUE(declared->End().ok());
  ASSERT_TRUE(owner_.RunUntil([&] { return owner_.ends.size() == 2; }));
  ASSERT_TRUE(owner_.ends[1].status.ok()) << owner_.ends[1].status;
  EXPECT_EQ(engine_->texts(), (std::vector<std::string>{"Hello", "Hi."}));
}

TEST_F(SpeechSessionTest, TextThatOnlyBeganLikeSsmlIsText) {
  Start();
  // "<spea" then a word: text, spoken as soon as it is decided, nothing lost.
  auto text = Open();
  ASSERT_TRUE(text->AddText("<spea").ok());
  ASSERT_TRUE(text->AddText("kers> are loud. ").ok());
  ASSERT_TRUE(text->AddText("Next").ok());
  ASSERT_TRUE(text->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  // "<" alone by the end is text too.
  auto lone = Open();
  ASSERT_TRUE(lone->AddText("<").ok());
  ASSERT_TRUE(lone->Flush().ok());
  ASSERT_TRUE(lone->AddText("3 you.").ok());
  ASSERT_TRUE(lone->End().ok());
  ASSERT_TRUE(owner_.RunUntil([&] { return owner_.ends.size() == 2; }));
  EXPECT_EQ(engine_->texts(),
            (std::vector<std::string>{"<speakers> are loud.", "Next", "<", "3 you."}));
}

TEST_F(SpeechSessionTest, MalformedSsmlEndsTheStreamWithInvalidSsml) {
  Start();
  SessionOptions options = Options();
  options.request.input_format = "ssml";
  auto session = Open(std::move(options));
  ASSERT_TRUE(session->AddText("<speak>Hi").ok());
  ASSERT_TRUE(session->End().ok());
  ASSERT_TRUE(owner_.RunUntilEnded());
  EXPECT_EQ(core::DetailOf(owner_.ends.front().status).code, "invalid_ssml");
}

}  // namespace
}  // namespace voxserve::service
