// The tone engine, the diagnostic streaming engine: one chunk of sine per word, per step, for
// every active sequence; the contract of engine/streaming_engine.h (ends once, Release frees a
// slot, chunks in order) and its options' validation.
#include "engine/tone/tone_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "engine/engine_factory.h"

namespace voxserve::engine {
namespace {

using ::testing::HasSubstr;

ToneConfig Fast() {
  ToneConfig config;
  config.step_ms = 0;  // no simulated compute time
  config.chunk_ms = 100;
  config.sample_rate = 16000;
  config.max_active = 2;
  return config;
}

std::unique_ptr<StreamRunner> RunnerOf(ToneEngine& engine) {
  auto runner = engine.CreateRunner();
  EXPECT_TRUE(runner.ok());
  return std::move(*runner);
}

TEST(ToneEngineTest, EmitsOneChunkPerWordAndEndsOnTheLast) {
  auto engine = ToneEngine::Create(Fast());
  ASSERT_TRUE(engine.ok());
  auto runner = RunnerOf(**engine);
  ASSERT_TRUE(runner->Begin(5, {"one two three", "a4", 1.0}).ok());
  for (int step = 0; step < 3; ++step) {
    std::vector<SequenceStep> out = runner->Step();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 5u);
    EXPECT_EQ(out[0].chunk.samples.size(), 1600u);  // 100 ms at 16 kHz
    EXPECT_EQ(out[0].chunk.sample_rate, 16000);
    EXPECT_EQ(out[0].end.has_value(), step == 2);
  }
  EXPECT_EQ(runner->Active(), 0u);
  EXPECT_TRUE(runner->Step().empty());
}

TEST(ToneEngineTest, TheToneIsContinuousAcrossChunks) {
  auto engine = ToneEngine::Create(Fast());
  ASSERT_TRUE(engine.ok());
  auto result = (*engine)->Synthesize(std::vector<SegmentInput>{{"a b", "a4", 1.0}});
  ASSERT_EQ(result.size(), 1u);
  ASSERT_TRUE(result[0].ok());
  const std::vector<float>& samples = result[0]->samples;
  ASSERT_EQ(samples.size(), 3200u);
  // A 440 Hz sine at 16 kHz moves at most 2*pi*440/16000*0.3 per sample, also at the seam.
  const double max_step = 2 * M_PI * 440 / 16000 * 0.3 + 1e-4;
  for (size_t i = 1; i < samples.size(); ++i) {
    ASSERT_LE(std::fabs(samples[i] - samples[i - 1]), max_step) << i;
  }
  float peak = 0;
  for (float s : samples) peak = std::max(peak, std::fabs(s));
  EXPECT_NEAR(peak, 0.3f, 0.01f);
}

TEST(ToneEngineTest, SpeedShortensEachChunk) {
  auto engine = ToneEngine::Create(Fast());
  ASSERT_TRUE(engine.ok());
  auto result = (*engine)->Synthesize(std::vector<SegmentInput>{{"a b", "c5", 2.0}});
  ASSERT_TRUE(result[0].ok());
  EXPECT_EQ(result[0]->samples.size(), 1600u);
}

TEST(ToneEngineTest, HoldsAtMostMaxActiveAndReleaseFreesASlot) {
  auto engine = ToneEngine::Create(Fast());
  ASSERT_TRUE(engine.ok());
  auto runner = RunnerOf(**engine);
  ASSERT_TRUE(runner->Begin(1, {"a b c", "a4", 1.0}).ok());
  ASSERT_TRUE(runner->Begin(2, {"a b c", "a4", 1.0}).ok());
  EXPECT_EQ(runner->Begin(3, {"a", "a4", 1.0}).code(), absl::StatusCode::kResourceExhausted);
  runner->Release(1);
  runner->Release(99);  // unknown: ignored
  ASSERT_TRUE(runner->Begin(3, {"a", "a4", 1.0}).ok());
  std::vector<SequenceStep> out = runner->Step();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, 2u);  // in begin order
  EXPECT_EQ(out[1].id, 3u);
  EXPECT_TRUE(out[1].end.has_value() && out[1].end->ok());
}

TEST(ToneEngineTest, TheFailWordEndsTheSegmentWithAnErrorAfterEarlierChunks) {
  auto engine = ToneEngine::Create(Fast());
  ASSERT_TRUE(engine.ok());
  auto runner = RunnerOf(**engine);
  ASSERT_TRUE(runner->Begin(1, {"fine TONE_FAIL never", "a4", 1.0}).ok());
  EXPECT_FALSE(runner->Step()[0].end.has_value());
  std::vector<SequenceStep> out = runner->Step();
  ASSERT_TRUE(out[0].end.has_value());
  EXPECT_EQ(out[0].end->code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(out[0].chunk.samples.empty());
  EXPECT_EQ(runner->Active(), 0u);
}

TEST(ToneEngineTest, UnknownVoicesAreRefused) {
  auto engine = ToneEngine::Create(Fast());
  ASSERT_TRUE(engine.ok());
  EXPECT_TRUE((*engine)->AcceptsVoice("c5"));
  EXPECT_FALSE((*engine)->AcceptsVoice("en-us"));
  auto runner = RunnerOf(**engine);
  EXPECT_EQ(runner->Begin(1, {"a", "en-us", 1.0}).code(), absl::StatusCode::kInvalidArgument);
  ToneConfig config = Fast();
  config.default_voice = "b7";
  EXPECT_THAT(std::string(ToneEngine::Create(config).status().message()),
              HasSubstr("voices: a4, c5"));
}

TEST(ToneEngineTest, TheFactoryBuildsItAndValidatesItsOptions) {
  auto engine = CreateEngine({"tone", "tone", "", {{"chunk_ms", "50"}, {"step_ms", "0"}}});
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->info().engine, "tone");
  ASSERT_NE((*engine)->AsStreaming(), nullptr);
  EXPECT_EQ((*engine)->AsStreaming()->max_active(), 16);

  auto bad = CreateEngine({"tone", "tone", "", {{"chunk_ms", "5"}}});
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("chunk_ms = '5'"));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("10..2000"));
  auto unknown = CreateEngine({"tone", "tone", "", {{"pitch", "1"}}});
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("unknown tone option 'pitch'"));
  auto word = CreateEngine({"tone", "tone", "", {{"max_active", "many"}}});
  EXPECT_EQ(word.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace voxserve::engine
