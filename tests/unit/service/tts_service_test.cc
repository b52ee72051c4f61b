// What TtsService refuses, and how readiness, admission and draining behave.
#include "core/error.h"
#include "gmock/gmock.h"
#include "service_test_support.h"

namespace voxserve::service {
namespace {

struct Refusal {
  const char* name;
  std::function<void(SynthesisRequest&)> change;
  absl::StatusCode code;
  const char* param;
};

class RefusalTest : public ServiceTest, public ::testing::WithParamInterface<Refusal> {};

TEST_P(RefusalTest, IsRefusedBeforeAnyWorkAndNeverCallsTheSink) {
  Start();
  SynthesisRequest request = Request("Hello there.");
  GetParam().change(request);
  auto sink = std::make_shared<RecordingSink>();
  auto job = service_->Synthesize(std::move(request), sink);
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), GetParam().code) << job.status();
  EXPECT_EQ(core::DetailOf(job.status()).param, GetParam().param);
  EXPECT_EQ(sink->completions(), 0);
  EXPECT_EQ(service_->InFlight(), 0u);
  EXPECT_TRUE(engine_->texts().empty());
}

INSTANTIATE_TEST_SUITE_P(
    Requests, RefusalTest,
    ::testing::Values(
        Refusal{"EmptyText", [](SynthesisRequest& r) { r.text = " \n"; },
                absl::StatusCode::kInvalidArgument, "input"},
        Refusal{"SpeedTooLow", [](SynthesisRequest& r) { r.speed = 0.2; },
                absl::StatusCode::kInvalidArgument, "speed"},
        Refusal{"SpeedTooHigh", [](SynthesisRequest& r) { r.speed = 4.01; },
                absl::StatusCode::kInvalidArgument, "speed"},
        Refusal{"UnknownVoice", [](SynthesisRequest& r) { r.voice = "carol"; },
                absl::StatusCode::kNotFound, "voice"},
        Refusal{"UnknownModel", [](SynthesisRequest& r) { r.model = "other"; },
                absl::StatusCode::kNotFound, "model"},
        Refusal{"TimeoutAboveTheMaximum",
                [](SynthesisRequest& r) { r.timeout = std::chrono::hours(1); },
                absl::StatusCode::kInvalidArgument, "timeout_ms"},
        Refusal{"TimeoutZero", [](SynthesisRequest& r) { r.timeout = std::chrono::milliseconds(0); },
                absl::StatusCode::kInvalidArgument, "timeout_ms"},
        Refusal{"InstructionsTooLong",
                [](SynthesisRequest& r) { r.instructions = std::string(4097, 'a'); },
                absl::StatusCode::kInvalidArgument, "instructions"},
        Refusal{"InvalidUtf8", [](SynthesisRequest& r) { r.text = "caf\xc3\x28"; },
                absl::StatusCode::kInvalidArgument, "input"},
        // Nothing an engine would say anything for: once 200 with 0.05 s of silence.
        Refusal{"OnlyPunctuation", [](SynthesisRequest& r) { r.text = "... ?! \xE3\x80\x82"; },
                absl::StatusCode::kInvalidArgument, "input"},
        Refusal{"OnlyNuls", [](SynthesisRequest& r) { r.text = std::string(3, '\0'); },
                absl::StatusCode::kInvalidArgument, "input"},
        Refusal{"OnlyZeroWidthAndPrivateUse",
                [](SynthesisRequest& r) { r.text = "\xE2\x80\x8B\xEE\x80\x80"; },
                absl::StatusCode::kInvalidArgument, "input"}),
    [](const auto& info) { return std::string(info.param.name); });

// Engines read C strings: an embedded NUL once cut the text short (200 with the first sentence).
TEST_F(ServiceTest, AnEmbeddedNulIsSpokenAsASpaceAndTheWholeTextReachesTheEngine) {
  Start();
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request(std::string("Hello world.\0 This is a longer sentence.", 40)), sink);
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_TRUE(sink->status().ok()) << sink->status();
  EXPECT_THAT(engine_->texts(),
              ::testing::ElementsAre("Hello world.", "This is a longer sentence."));
}

TEST_F(ServiceTest, SentencesWithNothingToSpeakAreNotSentToTheEngine) {
  Start();
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request("Alpha one.\n\xE2\x80\x8B\nBravo two."), sink);
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_THAT(engine_->texts(), ::testing::ElementsAre("Alpha one.", "Bravo two."));
}

TEST_F(ServiceTest, AFailedModelIsNamedOnceInTheLoadError) {
  ServiceOptions options;
  options.fail_to_load = true;
  Start(options);
  EXPECT_EQ(load_status_.message(), "model fake: fake model file is corrupt");
}

TEST_F(ServiceTest, OpenAiModelNamesAliasesAndOpenAiVoicesResolve) {
  Start();
  for (auto [model, voice] : {std::pair{"tts-1", "alloy"}, {"gpt-4o-mini-tts", "narrator"},
                              {"", ""}}) {
    SynthesisRequest request = Request("Hi.");
    request.model = model;
    request.voice = voice;
    auto sink = std::make_shared<RecordingSink>();
    auto job = Accept(std::move(request), sink);
    ASSERT_TRUE(sink->WaitComplete());
    EXPECT_TRUE(sink->status().ok()) << model << "/" << voice << ": " << sink->status();
  }
  std::vector<test_support::EngineCall> calls = engine_->calls();
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].voice_ids[0], "alice");  // alloy → alice
  EXPECT_EQ(calls[1].voice_ids[0], "bob");    // narrator → bob
  EXPECT_EQ(calls[2].voice_ids[0], "alice");  // the default voice
}

TEST_F(ServiceTest, ListsEngineVoicesThenAliasesAndOpenAiNames) {
  Start();
  std::vector<VoiceListing> voices = service_->ListVoices();
  std::map<std::string, std::string> alias_of;
  for (const VoiceListing& voice : voices) alias_of[voice.id] = voice.alias_of;
  EXPECT_EQ(alias_of.at("alice"), "");
  EXPECT_EQ(alias_of.at("narrator"), "bob");
  EXPECT_EQ(alias_of.at("alloy"), "alice");
}

TEST_F(ServiceTest, NotReadyAndRefusingUntilModelsAreLoaded) {
  ServiceOptions options;
  options.load = false;
  Start(options);
  EXPECT_FALSE(service_->Ready());
  auto sink = std::make_shared<RecordingSink>();
  auto job = service_->Synthesize(Request("Hi."), sink);
  EXPECT_EQ(job.status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(service_->LoadModels().ok());
  EXPECT_TRUE(service_->Ready());
  EXPECT_EQ(engine_->warmup_texts(), 1u);
}

TEST_F(ServiceTest, AModelThatFailsToLoadIsReportedAndKeepsTheServiceUnready) {
  ServiceOptions options;
  options.fail_to_load = true;
  Start(options);
  EXPECT_FALSE(load_status_.ok());
  EXPECT_NE(std::string(load_status_.message()).find("corrupt"), std::string::npos);
  EXPECT_FALSE(service_->Ready());
  std::vector<ModelStatus> models = service_->ModelStatuses();
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].state, ModelState::kFailed);
  EXPECT_NE(models[0].error.find("corrupt"), std::string::npos);
}

TEST_F(ServiceTest, HealthIsStartingThenReady) {
  ServiceOptions options;
  options.load = false;
  Start(options);
  EXPECT_EQ(service_->Health(), ServiceHealth::kStarting);
  ASSERT_TRUE(service_->LoadModels().ok());
  EXPECT_EQ(service_->Health(), ServiceHealth::kReady);
  EXPECT_EQ(service_->StartupError(), "");
  service_->BeginDrain();
  EXPECT_EQ(service_->Health(), ServiceHealth::kDraining);
}

TEST_F(ServiceTest, AModelThatFailedForGoodIsFailedNotStarting) {
  ServiceOptions options;
  options.fail_to_load = true;
  Start(options);
  EXPECT_EQ(service_->Health(), ServiceHealth::kFailed);
  EXPECT_EQ(ServiceHealthName(service_->Health()), "failed");
  EXPECT_NE(service_->StartupError().find("corrupt"), std::string::npos);
}

TEST_F(ServiceTest, AnAliasToAVoiceNoModelHasFailsStartupNamingIt) {
  ServiceOptions options;
  options.extra_aliases["ghost"] = {"", "nobody"};
  Start(options);
  ASSERT_FALSE(load_status_.ok());
  EXPECT_EQ(std::string(load_status_.message()),
            "voice_aliases.ghost: voice 'nobody' does not exist in model 'fake' "
            "(GET /v1/voices lists the voices)");
  EXPECT_FALSE(service_->Ready());
  EXPECT_EQ(service_->Health(), ServiceHealth::kFailed);
  EXPECT_EQ(service_->StartupError(), std::string(load_status_.message()));
}

TEST_F(ServiceTest, AnAliasWithAnExplicitModelIsCheckedInThatModel) {
  ServiceOptions options;
  options.extra_aliases["good"] = {"fake", "bob"};
  Start(options);
  EXPECT_TRUE(load_status_.ok()) << load_status_;
  EXPECT_EQ(service_->Health(), ServiceHealth::kReady);
}

TEST_F(ServiceTest, RejectionsAreCountedOnceWithTheResolvedModel) {
  Start();
  auto count = [this](const std::string& labels) {
    std::string text = registry_.RenderText();
    std::string prefix = "voxserve_requests_rejected_total{" + labels + "} ";
    size_t at = text.find(prefix);
    return at == std::string::npos ? 0.0 : std::stod(text.substr(at + prefix.size()));
  };
  SynthesisRequest unknown_voice = Request("Hello.");
  unknown_voice.voice = "carol";
  EXPECT_EQ(service_->Synthesize(std::move(unknown_voice), std::make_shared<RecordingSink>())
                .status()
                .code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(count(R"(model="fake",reason="not_found")"), 1);
  EXPECT_EQ(count(R"(model="",reason="not_found")"), 0);

  SynthesisRequest unknown_model = Request("Hello.");
  unknown_model.model = "nope";
  EXPECT_FALSE(
      service_->Synthesize(std::move(unknown_model), std::make_shared<RecordingSink>()).ok());
  EXPECT_EQ(count(R"(model="",reason="not_found")"), 1);  // no model to name

  absl::Status unparsed = core::InvalidArgument("invalid JSON", {}, "invalid_json");
  EXPECT_EQ(service_->RejectUnparsed(unparsed), unparsed);
  EXPECT_EQ(count(R"(model="",reason="invalid")"), 1);
}

TEST_F(ServiceTest, AFullQueueRefusesNewRequestsWithARetryHint) {
  ServiceOptions options;
  options.scheduling.queue_capacity = 1;
  Start(options);
  engine_->CloseGate();
  auto first = std::make_shared<RecordingSink>();
  auto running = Accept(Request("Alpha one."), first);  // in the engine
  ASSERT_TRUE(engine_->WaitForCalls(1));
  auto second = std::make_shared<RecordingSink>();
  auto queued = Accept(Request("Bravo two."), second);  // fills the queue
  auto third = std::make_shared<RecordingSink>();
  auto refused = service_->Synthesize(Request("Charlie three."), third);
  ASSERT_FALSE(refused.ok());
  core::ErrorDetail detail = core::DetailOf(refused.status());
  EXPECT_EQ(detail.reason, core::ErrorReason::kQueueFull);
  ASSERT_TRUE(detail.retry_after_seconds.has_value());
  EXPECT_GE(*detail.retry_after_seconds, 1);
  EXPECT_EQ(service_->InFlight(), 2u);
  engine_->OpenGate();
  EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));
  EXPECT_EQ(third->completions(), 0);
}

// A WebSocket or gRPC bidi stream's later sentences are separate requests; a full queue must not
// cut such a stream in the middle, while a new request is still refused.
TEST_F(ServiceTest, AStreamUnderWayKeepsGoingWhenTheQueueIsFull) {
  ServiceOptions options;
  options.scheduling.queue_capacity = 1;
  Start(options);
  engine_->CloseGate();
  auto first = std::make_shared<RecordingSink>();
  auto running = Accept(Request("Alpha one."), first);
  ASSERT_TRUE(engine_->WaitForCalls(1));
  auto second = std::make_shared<RecordingSink>();
  auto queued = Accept(Request("Bravo two."), second);  // the queue is full now
  SynthesisRequest next_sentence = Request("Charlie three.");
  next_sentence.continues_stream = true;
  auto third = std::make_shared<RecordingSink>();
  auto continued = service_->Synthesize(std::move(next_sentence), third);
  ASSERT_TRUE(continued.ok()) << continued.status();
  auto refused = service_->Synthesize(Request("Delta four."), std::make_shared<RecordingSink>());
  EXPECT_EQ(core::DetailOf(refused.status()).reason, core::ErrorReason::kQueueFull);
  engine_->OpenGate();
  EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));
  EXPECT_EQ(third->completions(), 1);
}

TEST_F(ServiceTest, DrainRefusesNewWorkAndLetsAcceptedWorkFinish) {
  Start();
  engine_->CloseGate();
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request("Alpha one. Bravo two."), sink);
  service_->BeginDrain();
  EXPECT_FALSE(service_->Ready());
  auto refused = service_->Synthesize(Request("Too late."), std::make_shared<RecordingSink>());
  EXPECT_EQ(core::DetailOf(refused.status()).reason, core::ErrorReason::kDraining);
  EXPECT_FALSE(service_->WaitIdle(std::chrono::milliseconds(20)));
  engine_->OpenGate();
  EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));
  EXPECT_TRUE(sink->status().ok()) << sink->status();
}

}  // namespace
}  // namespace voxserve::service
