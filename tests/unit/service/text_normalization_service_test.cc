// Where TtsService applies text normalization: before sentence splitting, for the engines that
// need it (Piper, Kokoro, CosyVoice), in the voice's language; never for espeak-ng or when the
// config turns it off; and the response cache keys the normalized text.
#include <gmock/gmock.h>

#include "service_test_support.h"

namespace voxserve::service {
namespace {

using NormalizationServiceTest = ServiceTest;

TEST_F(NormalizationServiceTest, APiperModelGetsTheTextWrittenOut) {
  ServiceOptions options;
  options.engine_name = "piper";  // the fake engine's voices speak en-us
  Start(options);
  RunOk(Request("Dr. Lee paid $12.50 on 2026-12-02. It weighs 3.5 kg."));
  EXPECT_THAT(engine_->texts(),
              ::testing::ElementsAre(
                  "Doctor Lee paid twelve dollars and fifty cents on December second, twenty "
                  "twenty-six.",
                  "It weighs three point five kilograms."));
}

TEST_F(NormalizationServiceTest, TimingsIndexTheTextAsSpoken) {
  ServiceOptions options;
  options.engine_name = "kokoro";
  options.engine.report_words = true;
  Start(options);
  auto sink = RunOk(Request("Wait 5 min."));
  ASSERT_EQ(sink->timings().size(), 1u);
  EXPECT_EQ(sink->timings()[0].text, "Wait five minutes.");
}

TEST_F(NormalizationServiceTest, CosyVoiceChoosesTheRulesByTheText) {
  ServiceOptions options;
  options.engine_name = "cosyvoice";
  Start(options);
  RunOk(Request("我有2本书。"));
  RunOk(Request("I have 2 books."));
  EXPECT_THAT(engine_->texts(), ::testing::ElementsAre("我有两本书。", "I have two books."));
}

TEST_F(NormalizationServiceTest, EspeakGetsTheTextAsSent) {
  ServiceOptions options;
  options.engine_name = "espeak";  // reads numbers itself
  Start(options);
  RunOk(Request("It weighs 3.5 kg."));
  EXPECT_THAT(engine_->texts(), ::testing::ElementsAre("It weighs 3.5 kg."));
}

TEST_F(NormalizationServiceTest, AnEngineOutsideTheListGetsTheTextAsSent) {
  Start();  // "fake"
  RunOk(Request("It weighs 3.5 kg."));
  EXPECT_THAT(engine_->texts(), ::testing::ElementsAre("It weighs 3.5 kg."));
}

TEST_F(NormalizationServiceTest, TheConfigCanTurnItOff) {
  ServiceOptions options;
  options.engine_name = "piper";
  options.normalize_text = false;
  Start(options);
  RunOk(Request("It weighs 3.5 kg."));
  EXPECT_THAT(engine_->texts(), ::testing::ElementsAre("It weighs 3.5 kg."));
}

TEST_F(NormalizationServiceTest, TheResponseCacheKeysTheNormalizedText) {
  ServiceOptions options;
  options.engine_name = "piper";
  options.cache.enabled = true;
  Start(options);
  auto written = RunOk(Request("It weighs 3 kg."));
  auto spelled = RunOk(Request("It weighs three kilograms."));
  EXPECT_EQ(engine_->texts().size(), 1u);  // the same words: the second is a cache hit
  EXPECT_EQ(spelled->bytes(), written->bytes());
}

TEST_F(NormalizationServiceTest, ARequestMayTurnItOff) {
  ServiceOptions options;
  options.engine_name = "piper";
  Start(options);
  SynthesisRequest off = Request("It weighs 3.5 kg.");
  off.normalize_text = false;
  RunOk(off);
  EXPECT_THAT(engine_->texts(), ::testing::ElementsAre("It weighs 3.5 kg."));
}

TEST_F(NormalizationServiceTest, ARequestMayTurnItOnForAnyEngine) {
  ServiceOptions options;
  options.engine_name = "espeak";  // in the voice's language (the fake's: en-us)
  options.normalize_text = false;
  Start(options);
  SynthesisRequest on = Request("It weighs 3.5 kg.");
  on.normalize_text = true;
  RunOk(on);
  RunOk(Request("It weighs 3.5 kg."));
  EXPECT_THAT(engine_->texts(),
              ::testing::ElementsAre("It weighs three point five kilograms.", "It weighs 3.5 kg."));
}

}  // namespace
}  // namespace voxserve::service
