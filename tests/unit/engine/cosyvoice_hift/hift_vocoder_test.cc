#include "engine/cosyvoice/hift_vocoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/hift_stages.h"
#include "unit/engine/cosyvoice_bundle/tiny_bundle.h"
#include "unit/engine/cosyvoice_hift/hift_oracles.h"

namespace voxserve::engine::cosyvoice {
namespace {

using ::testing::HasSubstr;
using testing::MaxAbsDiff;
using testing::Oracle;
using testing::TinyBundle;
using testing::ZeroNoise;

// One vocoder for the suite: opening the sessions is the slow part under ASan.
class HiftVocoderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::HaveTinyBundle()) return;
    auto manifest = LoadBundleManifest(TinyBundle());
    ASSERT_TRUE(manifest.ok()) << manifest.status();
    onnx::OnnxSessionConfig config;
    config.intra_op_threads = 1;
    auto vocoder = HiftVocoder::Create(*manifest, TinyBundle(), config);
    ASSERT_TRUE(vocoder.ok()) << vocoder.status();
    vocoder_ = std::move(*vocoder).release();
  }
  static void TearDownTestSuite() {
    delete vocoder_;
    vocoder_ = nullptr;
  }
  void SetUp() override {
    VOXSERVE_REQUIRE_TINY_BUNDLE();
    ASSERT_NE(vocoder_, nullptr);
  }
  static NpyArray Golden(const std::string& stage, const std::string& key) {
    auto array = ReadNpy(TinyBundle() + "/goldens/" + stage + "/" + key + ".npy");
    EXPECT_TRUE(array.ok()) << array.status();
    return array.ok() ? *array : NpyArray{};
  }
  static MelView View(const NpyArray& mel) { return {mel.floats, mel.shape.back()}; }

  static HiftVocoder* vocoder_;
};
HiftVocoder* HiftVocoderTest::vocoder_ = nullptr;

TEST_F(HiftVocoderTest, F0MatchesTheGolden) {
  for (const char* stage : {"hift.f0/0", "hift.f0/1"}) {
    NpyArray mel = Golden(stage, "mel");
    auto f0 = vocoder_->F0(View(mel));
    ASSERT_TRUE(f0.ok()) << f0.status();
    // The graph's own numerics against torch's (measured 9e-8): the golden's 1e-3 with room.
    EXPECT_LT(MaxAbsDiff(*f0, Golden(stage, "f0").floats), 1e-4) << stage;
  }
}

TEST_F(HiftVocoderTest, DecodeMatchesUpstreamDecodeOnTheGoldenSource) {
  for (const char* stage : {"hift.full/0", "hift.full/1"}) {
    NpyArray mel = Golden(stage, "mel");
    auto audio = vocoder_->Decode(View(mel), Golden(stage, "source").floats);
    ASSERT_TRUE(audio.ok()) << audio.status();
    const double error = MaxAbsDiff(*audio, Golden(stage, "speech").floats);
    // Source STFT, two graphs' float32 kernels (ORT vs torch), iSTFT: 1.2e-7 measured; the
    // golden's 1e-3 is what verify-bundle holds a real bundle to.
    EXPECT_LT(error, 1e-4) << stage << " max abs error " << error;
  }
}

TEST_F(HiftVocoderTest, VocodeIsReproduciblePerSeedAndAppliesTheSourceCache) {
  NpyArray mel = Golden("hift.full/0", "mel");
  const size_t samples = static_cast<size_t>(mel.shape.back()) * 480;
  SeededSourceNoise a(7), b(7), c(8);
  auto first = vocoder_->Vocode(View(mel), {}, a);
  auto again = vocoder_->Vocode(View(mel), {}, b);
  auto other = vocoder_->Vocode(View(mel), {}, c);
  ASSERT_TRUE(first.ok() && again.ok() && other.ok()) << first.status();
  ASSERT_EQ(first->audio.size(), samples);
  ASSERT_EQ(first->source.size(), samples);
  EXPECT_EQ(first->audio, again->audio);
  EXPECT_NE(first->audio, other->audio);
  // Upstream's streaming loop hands the last 3840 source samples of a chunk to the next
  // (model.py:316); they replace the start of the new source (generator.py:566).
  std::vector<float> cache(first->source.end() - 3840, first->source.end());
  SeededSourceNoise d(9);
  auto cached = vocoder_->Vocode(View(mel), cache, d);
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_TRUE(std::equal(cache.begin(), cache.end(), cached->source.begin()));
  // And the audio is decode() of exactly that source.
  auto decoded = vocoder_->Decode(View(mel), cached->source);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, cached->audio);
  std::vector<float> too_long(samples + 1, 0.0f);
  EXPECT_THAT(vocoder_->Vocode(View(mel), too_long, d).status().message(),
              HasSubstr("cache_source has"));
}

// Mels of one length share the graphs' calls (issue 44: HiFT batched across streams); each
// result is what its own Vocode gives, and a bad mel fails alone.
TEST_F(HiftVocoderTest, VocodeBatchSharesCallsByLengthAndEachIsAsAlone) {
  ASSERT_TRUE(vocoder_->batches_rows()) << "export.py writes HiFT graphs with a rows axis";
  NpyArray mel = Golden("hift.full/0", "mel");
  const int64_t frames = mel.shape.back();
  std::vector<float> louder = mel.floats;
  for (float& x : louder) x *= 1.5f;
  std::vector<float> shorter(mel.floats.size() / frames * (frames - 1));
  for (size_t bin = 0; bin < 80; ++bin) {
    std::copy_n(mel.floats.begin() + bin * frames, frames - 1,
                shorter.begin() + bin * (frames - 1));
  }
  std::vector<float> broken(80 * 4, 0.0f);
  broken[7] = NAN;
  std::vector<float> cache(3840, 0.25f);
  SeededSourceNoise n0(1), n1(2), n2(3), n3(4);
  const VocodeInput inputs[] = {{View(mel), {}, &n0},
                                {{shorter, frames - 1}, {}, &n1},
                                {{broken, 4}, {}, &n2},
                                {{louder, frames}, cache, &n3}};
  const int64_t calls = vocoder_->decoder_calls();
  auto out = vocoder_->VocodeBatch(inputs);
  EXPECT_EQ(vocoder_->decoder_calls() - calls, 2);  // the two of `frames`, then the shorter
  ASSERT_EQ(out.size(), 4u);
  EXPECT_THAT(out[2].status().message(), HasSubstr("not finite"));
  SeededSourceNoise a0(1), a1(2), a3(4);
  auto alone0 = vocoder_->Vocode(View(mel), {}, a0);
  auto alone1 = vocoder_->Vocode({shorter, frames - 1}, {}, a1);
  auto alone3 = vocoder_->Vocode({louder, frames}, cache, a3);
  ASSERT_TRUE(alone0.ok() && alone1.ok() && alone3.ok());
  for (auto [batched, alone] :
       {std::pair{&out[0], &*alone0}, std::pair{&out[1], &*alone1}, std::pair{&out[3], &*alone3}}) {
    ASSERT_TRUE(batched->ok()) << batched->status();
    EXPECT_EQ((*batched)->source, alone->source);
    ASSERT_EQ((*batched)->audio.size(), alone->audio.size());
    // The stacked rows may take other float kernels' paths: rounding at most.
    EXPECT_LT(MaxAbsDiff((*batched)->audio, alone->audio), 1e-5);
  }
  EXPECT_GT(MaxAbsDiff(out[0]->audio, out[3]->audio), 1e-3);  // rows did not mix
}

TEST_F(HiftVocoderTest, AudioIsClampedToTheAudioLimit) {
  // A loud mel (x1000) drives the random decoder's magnitudes to the 1e2 clip and the audio
  // past 1 (x40 does not); the output stops at 0.99 exactly.
  NpyArray mel = Golden("hift.full/0", "mel");
  for (float& x : mel.floats) x *= 1000.0f;
  ZeroNoise zero;
  auto out = vocoder_->Vocode(View(mel), {}, zero);
  ASSERT_TRUE(out.ok()) << out.status();
  auto [lo, hi] = std::minmax_element(out->audio.begin(), out->audio.end());
  EXPECT_GE(*lo, -0.99f);
  EXPECT_LE(*hi, 0.99f);
  EXPECT_TRUE(*lo == -0.99f || *hi == 0.99f) << "the clamp never acted: " << *lo << " " << *hi;
}

TEST_F(HiftVocoderTest, RefusesBadMelShapesWithClearErrors) {
  ZeroNoise zero;
  std::vector<float> mel(80 * 10, 0.0f);
  EXPECT_THAT(vocoder_->Vocode({mel, 11}, {}, zero).status().message(), HasSubstr("want [80, 11]"));
  EXPECT_THAT(vocoder_->Vocode({mel, 0}, {}, zero).status().message(), HasSubstr("0 frames"));
  std::vector<float> bins79(79 * 10, 0.0f);
  EXPECT_THAT(vocoder_->F0({bins79, 10}).status().message(), HasSubstr("790 values"));
  EXPECT_THAT(vocoder_->Vocode({{}, HiftVocoder::kMaxFrames + 1}, {}, zero).status().message(),
              HasSubstr("want 1..15000"));
  mel[80 * 3 + 5] = NAN;
  EXPECT_THAT(vocoder_->Vocode({mel, 10}, {}, zero).status().message(), HasSubstr("not finite"));
  std::vector<float> good(80 * 10, 0.0f);
  EXPECT_THAT(vocoder_->Decode({good, 10}, std::vector<float>(100, 0.0f)).status().message(),
              HasSubstr("needs 4800"));
  // The smallest mel works: one frame, 480 samples.
  std::vector<float> one(80, 0.0f);
  auto tiny = vocoder_->Vocode({one, 1}, {}, zero);
  ASSERT_TRUE(tiny.ok()) << tiny.status();
  EXPECT_EQ(tiny->audio.size(), 480u);
}

TEST_F(HiftVocoderTest, VerifyBundleReportsTheHiftStagesWithinTolerance) {
  auto verifier = BundleVerifier::Create(TinyBundle());
  ASSERT_TRUE(verifier.ok()) << verifier.status();
  ASSERT_TRUE(AddHiftStages(**verifier).ok());
  int checked = 0;
  auto results = (*verifier)->Run();
  std::cout << FormatResults(results);  // the measured errors, in the test log
  for (const auto& r : results) {
    if (r.stage.rfind("hift.source/", 0) != 0 && r.stage.rfind("hift.full/", 0) != 0) continue;
    EXPECT_EQ(r.outcome.kind, StageOutcome::Kind::kPassed) << r.stage << ": " << r.outcome.message;
    EXPECT_LE(r.outcome.max_abs_error, r.atol) << r.stage;
    ++checked;
  }
  EXPECT_EQ(checked, 4);  // two texts x (source, full)
}

TEST(ChangeMelSpeedTest, MatchesUpstreamInterpolate) {
  VOXSERVE_REQUIRE_HIFT_ORACLES();
  std::vector<float> mel = Oracle("speed_mel");  // [80, 37]
  for (double speed : {0.5, 0.8, 1.25, 1.7}) {
    int64_t frames = 0;
    auto out = ChangeMelSpeed({mel, 37}, 80, speed, &frames);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(frames, static_cast<int64_t>(37 / speed));
    std::string name = "speed_" + (speed == 0.5    ? std::string("0.5")
                                   : speed == 0.8  ? "0.8"
                                   : speed == 1.25 ? "1.25"
                                                   : "1.7");
    // Two-tap blends of N(0, 1) values. Our source index is ATen's formula in float32, yet ATen's
    // kernel rounds its blend weights differently (measured: up to 2e-6 in a weight, 8e-6 in a
    // value, ~20 float32 ulps at |x| ~ 3): far below anything audible in a log-mel.
    EXPECT_LT(MaxAbsDiff(*out, Oracle(name)), 2e-5) << "speed " << speed;
  }
}

TEST(ChangeMelSpeedTest, RefusesBadSpeeds) {
  std::vector<float> mel(80 * 4, 0.0f);
  int64_t frames = 0;
  EXPECT_THAT(ChangeMelSpeed({mel, 4}, 80, 0.0, &frames).status().message(), HasSubstr("> 0"));
  EXPECT_THAT(ChangeMelSpeed({mel, 4}, 80, NAN, &frames).status().message(), HasSubstr("finite"));
  EXPECT_THAT(ChangeMelSpeed({mel, 4}, 80, 5.0, &frames).status().message(), HasSubstr("into 0"));
  EXPECT_THAT(ChangeMelSpeed({mel, 3}, 80, 1.0, &frames).status().message(),
              HasSubstr("[80, frames"));
  auto same = ChangeMelSpeed({mel, 4}, 80, 1.0, &frames);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, mel);
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
