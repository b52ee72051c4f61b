#include "engine/cosyvoice/hift_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "unit/engine/cosyvoice_hift/hift_oracles.h"

namespace voxserve::engine::cosyvoice {
namespace {

using ::testing::HasSubstr;
using testing::InjectedNoise;
using testing::MaxAbsDiff;
using testing::Oracle;
using testing::ZeroNoise;

SineSourceParams CosyVoice2Params(std::vector<float> weight, float bias) {
  SineSourceParams p;  // the defaults are cosyvoice2.yaml's (hift: nsf_alpha 0.1, ...)
  p.linear_weight = std::move(weight);
  p.linear_bias = bias;
  return p;
}

TEST(SineSourceTest, MatchesUpstreamSineGen2WithItsNoiseInjected) {
  VOXSERVE_REQUIRE_HIFT_ORACLES();
  auto source = SineSource::Create(
      CosyVoice2Params(Oracle("sinegen_linear_weight"), Oracle("sinegen_linear_bias").at(0)));
  ASSERT_TRUE(source.ok()) << source.status();
  std::vector<float> f0 = Oracle("sinegen_f0");  // 40 frames: unvoiced, 90-420 Hz, 5 Hz, wobble
  InjectedNoise noise(Oracle("sinegen_noise"));
  auto excitation = source->Excite(f0, noise);
  ASSERT_TRUE(excitation.ok()) << excitation.status();
  EXPECT_EQ(noise.used(), 40u * 480 * 9);  // one normal per sine sample, nothing else drawn
  // uv is a comparison of the same float f0 with the same threshold: equal.
  EXPECT_EQ(excitation->uv, Oracle("sinegen_uv"));
  // Sines of amplitude 0.1 whose phase reaches ~1e4 rad by frame 40: float32 holds the phase to
  // ~1e-3 rad there (on both sides), so ~0.1 * 1e-3; measured 9.8e-5. Upstream's random initial
  // phase (not drawn here, see hift_source.cc) or a wrong interpolation would show up as errors
  // of order 0.1.
  const double error = MaxAbsDiff(excitation->sines, Oracle("sinegen_sines"));
  EXPECT_LT(error, 5e-4) << "max abs error " << error;
  auto merged = source->Merge(excitation->sines);
  ASSERT_TRUE(merged.ok());
  EXPECT_LT(MaxAbsDiff(*merged, Oracle("sinegen_source")), 5e-4);  // measured 4.6e-5
}

TEST(SineSourceTest, SeededNoiseIsReproducibleAndStandardNormal) {
  SeededSourceNoise a(42), b(42), c(43);
  std::vector<float> x(20001), y(20001), z(20001);
  a.FillNormal(x);
  b.FillNormal(y);
  c.FillNormal(z);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  double mean = std::accumulate(x.begin(), x.end(), 0.0) / x.size();
  double var = 0;
  for (float v : x) var += (v - mean) * (v - mean);
  var /= x.size();
  // 20001 draws: the mean's standard error is 0.007, the variance's 0.01.
  EXPECT_NEAR(mean, 0.0, 0.035);
  EXPECT_NEAR(var, 1.0, 0.05);
}

TEST(SineSourceTest, NoiseAmplitudeFollowsVoicing) {
  auto source = SineSource::Create(CosyVoice2Params(std::vector<float>(9, 0.0f), 0.0f));
  ASSERT_TRUE(source.ok());
  // Frame 0 unvoiced (5 Hz <= 10 Hz), frame 1 voiced: noise of 0.1 / 3 and of 0.003.
  class Ones final : public SourceNoise {
    void FillNormal(std::span<float> out) override { std::fill(out.begin(), out.end(), 1.0f); }
  } ones;
  ZeroNoise zero;
  auto noisy = source->Excite(std::vector<float>{5.0f, 200.0f}, ones);
  auto clean = source->Excite(std::vector<float>{5.0f, 200.0f}, zero);
  ASSERT_TRUE(noisy.ok() && clean.ok());
  EXPECT_EQ(clean->sines[100 * 9], 0.0f);  // unvoiced: no sine
  EXPECT_NEAR(noisy->sines[100 * 9] - clean->sines[100 * 9], 0.1 / 3, 1e-7);
  EXPECT_NEAR(noisy->sines[600 * 9] - clean->sines[600 * 9], 0.003, 1e-7);
  EXPECT_EQ(clean->uv[479], 0.0f);
  EXPECT_EQ(clean->uv[480], 1.0f);
}

TEST(SineSourceTest, RefusesBadF0AndBadParameters) {
  auto source = SineSource::Create(CosyVoice2Params(std::vector<float>(9, 0.1f), 0.0f));
  ASSERT_TRUE(source.ok());
  ZeroNoise zero;
  EXPECT_THAT(source->Excite({}, zero).status().message(), HasSubstr("no f0 frames"));
  EXPECT_THAT(source->Excite(std::vector<float>{100, -1}, zero).status().message(),
              HasSubstr("frame 1"));
  EXPECT_THAT(source->Excite(std::vector<float>{NAN}, zero).status().message(),
              HasSubstr("finite"));
  EXPECT_THAT(source->Merge(std::vector<float>(10, 0.0f)).status().message(),
              HasSubstr("[samples >= 1, 9]"));
  EXPECT_THAT(
      SineSource::Create(CosyVoice2Params(std::vector<float>(8, 0.1f), 0)).status().message(),
      HasSubstr("9 sines"));
}

TEST(InterpolateLinearTest, MatchesAtenOnSmallCases) {
  // F.interpolate(torch.tensor([[[0., 1., 2., 3.]]]), scale_factor=2, mode="linear"):
  // [0, .25, .75, 1.25, 1.75, 2.25, 2.75, 3] (edges clamp).
  std::vector<float> up = InterpolateLinear(std::vector<float>{0, 1, 2, 3}, 8, 0.5f);
  EXPECT_EQ(up, (std::vector<float>{0, 0.25f, 0.75f, 1.25f, 1.75f, 2.25f, 2.75f, 3}));
  // scale_factor=0.5: source indices 0.5 and 2.5.
  EXPECT_EQ(InterpolateLinear(std::vector<float>{0, 1, 2, 3}, 2, 2.0f),
            (std::vector<float>{0.5f, 2.5f}));
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
