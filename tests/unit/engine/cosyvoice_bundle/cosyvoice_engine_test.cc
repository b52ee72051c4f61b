#include "engine/cosyvoice/cosyvoice_engine.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/cosyvoice/npy.h"
#include "engine/engine_factory.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using testing::BrokenBundle;
using ::testing::HasSubstr;
using testing::TinyBundle;

std::vector<float> Floats(const std::string& rel) {
  auto array = ReadNpy(TinyBundle() + "/" + rel);
  EXPECT_TRUE(array.ok()) << array.status();
  return array.ok() ? array->floats : std::vector<float>{};
}

TEST(CosyVoiceEngine, LoadsTheTinyBundleThroughTheFactory) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  auto engine = CreateEngine({"cv", "cosyvoice", "", {{"path", TinyBundle()}}});
  ASSERT_TRUE(engine.ok()) << engine.status();
  EXPECT_EQ((*engine)->info().engine, "cosyvoice");
  EXPECT_TRUE((*engine)->info().voices.empty());
  EXPECT_NE((*engine)->voice_cloner(), nullptr);
  SegmentInput input{"Hello world.", "someone", 1.0};
  auto results = (*engine)->Synthesize(std::span(&input, 1));
  ASSERT_EQ(results.size(), 1u);
  // Synthesis needs a cloned voice's profile (cosyvoice_runner_test.cc synthesizes with one).
  EXPECT_TRUE(absl::IsInvalidArgument(results[0].status())) << results[0].status();
  EXPECT_THAT(std::string(results[0].status().message()), HasSubstr("cloned voices only"));
  EXPECT_NE((*engine)->AsStreaming(), nullptr);
  EXPECT_EQ((*engine)->info().cloned_voices.family, "cosyvoice2");
  EXPECT_EQ((*engine)->info().cloned_voices.sample_rate, 24000);
}

TEST(CosyVoiceEngine, ABadBundleFailsTheLoadWithCheckModelsMessage) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  BrokenBundle broken("engine", [](nlohmann::json&) {}, {"hift_f0.onnx"});
  auto engine = CreateEngine({"cv", "cosyvoice", "", {{"path", broken.dir()}}});
  ASSERT_FALSE(engine.ok());
  EXPECT_THAT(std::string(engine.status().message()),
              HasSubstr("graph hift_f0: file hift_f0.onnx missing"));
}

TEST(CosyVoiceEngine, OptionsAreChecked) {
  auto no_path = CreateEngine({"cv", "cosyvoice", "", {}});
  EXPECT_THAT(std::string(no_path.status().message()), HasSubstr("options.path"));
  auto unknown = CreateEngine({"cv", "cosyvoice", "", {{"bundle", "/x"}}});
  EXPECT_THAT(std::string(unknown.status().message()), HasSubstr("unknown cosyvoice option"));
  auto too_many_prefills =
      CreateEngine({"cv",
                    "cosyvoice",
                    "",
                    {{"path", "/x"}, {"max_active", "2"}, {"max_prefills_per_step", "3"}}});
  EXPECT_THAT(std::string(too_many_prefills.status().message()),
              HasSubstr("max_prefills_per_step = 3 must not exceed max_active = 2"));
  auto zero_prefills =
      CreateEngine({"cv", "cosyvoice", "", {{"path", "/x"}, {"max_prefills_per_step", "0"}}});
  EXPECT_THAT(std::string(zero_prefills.status().message()),
              HasSubstr("max_prefills_per_step = '0' must be a whole number in 1..256"));
}

TEST(CosyVoiceEngine, AProfileFromFeaturesAlignsMelAndTokensTwoToOne) {
  VOXSERVE_REQUIRE_TINY_BUNDLE();
  CosyVoiceEngineConfig config;
  config.model_id = "cv";
  config.bundle_path = TinyBundle();
  auto engine = CosyVoiceEngine::Create(config);
  ASSERT_TRUE(engine.ok()) << engine.status();
  PromptFeatures features;
  features.fbank = Floats("goldens/audio.fbank/fbank.npy");
  features.whisper_mel = Floats("goldens/audio.whisper_logmel/logmel.npy");
  features.prompt_mel = Floats("goldens/audio.prompt_mel/mel.npy");
  features.seconds = 2.0;
  auto profile = (*engine)->ProfileFromFeatures(features);
  ASSERT_TRUE(profile.ok()) << profile.status();
  EXPECT_EQ(profile->family, "cosyvoice2");
  auto want_tokens = ReadNpy(TinyBundle() + "/goldens/frontend.align/prompt_tokens.npy");
  ASSERT_TRUE(want_tokens.ok());
  const ProfileTensor& tokens = profile->tensors.at("prompt_speech_tokens");
  EXPECT_EQ(std::vector<int64_t>(tokens.ints.begin(), tokens.ints.end()), want_tokens->ints);
  EXPECT_EQ(profile->tensors.at("prompt_mel").shape,
            (std::vector<int64_t>{2 * tokens.shape[0], 80}));
  EXPECT_EQ(profile->tensors.at("speaker_embedding").shape, (std::vector<int64_t>{192}));

  features.seconds = 31;
  EXPECT_TRUE(absl::IsOutOfRange((*engine)->ProfileFromFeatures(features).status()));
  // CloneVoice refuses what is no recording, before any graph runs.
  uint8_t audio[4] = {1, 2, 3, 4};
  EXPECT_TRUE(absl::IsInvalidArgument((*engine)->CloneVoice({audio, ""}).status()));
  EXPECT_TRUE(absl::IsInvalidArgument((*engine)->CloneVoice({{}, "hello"}).status()));
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
