// SSML through TtsService (docs/ssml.md): detection, the segments a document becomes, and what
// each element does to the engine's input and to the audio the service delivers.
#include <gmock/gmock.h>

#include "core/error.h"
#include "service_test_support.h"

namespace voxserve::service {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int kRate = 16000;  // FakeEngineOptions::sample_rate

class SsmlServiceTest : public ServiceTest {
 protected:
  absl::Status Refusal(SynthesisRequest request) {
    auto job = service_->Synthesize(std::move(request), std::make_shared<RecordingSink>());
    EXPECT_FALSE(job.ok());
    return job.ok() ? absl::OkStatus() : job.status();
  }
  static size_t Samples(const std::string& wav) { return (wav.size() - 44) / 2; }
};

TEST_F(SsmlServiceTest, TextStartingWithSpeakIsSsml) {
  Start();
  RunOk(Request("<speak>Hello <sub alias=\"World Wide Web\">WWW</sub>.</speak>"));
  EXPECT_THAT(engine_->texts(), ElementsAre("Hello World Wide Web."));
}

TEST_F(SsmlServiceTest, InputFormatTextSpeaksTheMarkup) {
  Start();
  SynthesisRequest request = Request("<speak>Hi.</speak>");
  request.input_format = "text";
  RunOk(request);
  EXPECT_THAT(engine_->texts(), ElementsAre("<speak>Hi.</speak>"));
}

TEST_F(SsmlServiceTest, InputFormatSsmlTakesAFragment) {
  Start();
  SynthesisRequest request = Request("One <break time=\"1s\"/> two.");
  request.input_format = "ssml";
  auto sink = RunOk(request);
  EXPECT_THAT(engine_->texts(), ElementsAre("One", "two."));
  EXPECT_EQ(Samples(sink->bytes()), 3u + kRate + 4u);
}

TEST_F(SsmlServiceTest, AnotherInputFormatIsRefused) {
  Start();
  SynthesisRequest request = Request("Hi.");
  request.input_format = "html";
  absl::Status status = Refusal(request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(status).code, "invalid_input_format");
  EXPECT_EQ(core::DetailOf(status).param, "input_format");
}

TEST_F(SsmlServiceTest, MalformedSsmlNamesLineAndColumn) {
  Start();
  absl::Status status = Refusal(Request("<speak>\nHello <break time=\"1s\"></speak>"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(status).code, "invalid_ssml");
  EXPECT_THAT(status.message(), HasSubstr("line 2"));
  EXPECT_TRUE(engine_->texts().empty());
}

TEST_F(SsmlServiceTest, ABreakIsSilenceOfItsLengthBetweenSegments) {
  Start();
  auto sink = RunOk(Request("<speak>Hello <break time=\"500ms\"/> there.</speak>"));
  EXPECT_THAT(engine_->texts(), ElementsAre("Hello", "there."));
  const std::string wav = sink->bytes();
  ASSERT_EQ(Samples(wav), 5u + kRate / 2 + 6u);
  EXPECT_THAT(SegmentLevels(wav), ElementsAre(LevelOf('H'), 0, LevelOf('t')));
}

TEST_F(SsmlServiceTest, ABreakShiftsTheFollowingWordsTimings) {
  ServiceOptions options;
  options.engine.report_words = true;
  Start(options);
  auto sink = RunOk(Request("<speak>Hello <break time=\"2s\"/> there.</speak>"));
  std::vector<SegmentTimings> timings = sink->timings();
  ASSERT_EQ(timings.size(), 2u);  // the pause reports no words
  EXPECT_EQ(timings[0].text, "Hello");
  EXPECT_EQ(timings[1].text, "there.");
  ASSERT_EQ(timings[1].words.size(), 1u);
  EXPECT_NEAR(timings[1].start_s, 5.0 / kRate + 2.0, 1e-9);
  EXPECT_NEAR(timings[1].words[0].start_s, timings[0].end_s + 2.0, 1e-9);
}

TEST_F(SsmlServiceTest, ProsodyRateMultipliesTheRequestSpeedWithinTheEngineRange) {
  Start();
  SynthesisRequest request = Request(
      "<speak>A. <prosody rate=\"50%\">B.</prosody> <prosody rate=\"x-fast\">C.</prosody></speak>");
  request.speed = 3.0;
  RunOk(request);
  std::vector<double> speeds;
  for (const auto& call : engine_->calls())
    speeds.insert(speeds.end(), call.speeds.begin(), call.speeds.end());
  EXPECT_THAT(speeds, ElementsAre(3.0, 1.5, 4.0));
}

TEST_F(SsmlServiceTest, VolumeScalesTheSegmentsSamples) {
  Start();
  auto sink = RunOk(Request("<speak>A<prosody volume=\"-6dB\">A</prosody></speak>"));
  // The fake engine's level for "A" is 65/256; -6 dB is a factor of 0.501.
  std::vector<int16_t> levels = SegmentLevels(sink->bytes());
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_EQ(levels[0], LevelOf('A'));
  EXPECT_NEAR(levels[1], LevelOf('A') * std::pow(10, -6 / 20.0), 1.0);
}

TEST_F(SsmlServiceTest, VoiceSwitchesWithinTheModel) {
  Start();
  RunOk(Request("<speak>One. <voice name=\"bob\">Two.</voice> Three.</speak>"));
  std::vector<std::string> voices;
  for (const auto& call : engine_->calls())
    voices.insert(voices.end(), call.voice_ids.begin(), call.voice_ids.end());
  EXPECT_THAT(voices, ElementsAre("alice", "bob", "alice"));
}

TEST_F(SsmlServiceTest, AnUnknownVoiceIsRefusedByName) {
  Start();
  absl::Status status = Refusal(Request("<speak><voice name=\"carol\">Hi.</voice></speak>"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(status).code, "voice_not_found");
  EXPECT_THAT(status.message(), HasSubstr("carol"));
}

TEST_F(SsmlServiceTest, PhonemesGoToEnginesThatSpeakIpa) {
  ServiceOptions options;
  options.engine.speaks_ipa = true;
  Start(options);
  RunOk(Request("<speak>Say <phoneme alphabet=\"ipa\" ph=\"təˈmɑːtoʊ\">tomato</phoneme>.</speak>"));
  std::vector<std::string> phonemes;
  for (const auto& call : engine_->calls())
    phonemes.insert(phonemes.end(), call.phonemes.begin(), call.phonemes.end());
  EXPECT_THAT(engine_->texts(), ElementsAre("Say", "tomato"));  // "." alone is not spoken
  EXPECT_THAT(phonemes, ElementsAre("", "təˈmɑːtoʊ"));
}

TEST_F(SsmlServiceTest, PhonemesAreRefusedWhereTheEngineCannot) {
  Start();
  absl::Status status =
      Refusal(Request("<speak><phoneme alphabet=\"ipa\" ph=\"ab\">x</phoneme></speak>"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core::DetailOf(status).code, "ssml_unsupported");
  EXPECT_THAT(status.message(), HasSubstr("phoneme"));
  EXPECT_TRUE(engine_->texts().empty());
}

TEST_F(SsmlServiceTest, PitchReachesOnlyEnginesThatControlIt) {
  for (bool controls : {false, true}) {
    ServiceOptions options;
    options.engine.controls_pitch = controls;
    Start(options);
    RunOk(Request("<speak><prosody pitch=\"x-high\">Hi.</prosody></speak>"));
    ASSERT_EQ(engine_->calls().size(), 1u);
    EXPECT_DOUBLE_EQ(engine_->calls()[0].pitches[0], controls ? 1.4 : 1.0);
    service_.reset();
    engine_ = nullptr;  // the service owned it; TearDown must not open its gate
  }
}

TEST_F(SsmlServiceTest, TheCacheTellsStylesApart) {
  ServiceOptions options;
  options.cache.enabled = true;
  Start(options);
  auto loud = RunOk(Request("<speak>Hi.</speak>"));
  auto soft = RunOk(Request("<speak><prosody volume=\"-6dB\">Hi.</prosody></speak>"));
  EXPECT_NE(loud->bytes(), soft->bytes());
  EXPECT_EQ(engine_->texts().size(), 2u);
}

}  // namespace
}  // namespace voxserve::service
