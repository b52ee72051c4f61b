#include "engine/cosyvoice/hift_stft.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>

#include "audio/features/window.h"
#include "unit/engine/cosyvoice_hift/hift_oracles.h"

namespace voxserve::engine::cosyvoice {
namespace {

using ::testing::HasSubstr;
using testing::MaxAbsDiff;
using testing::Oracle;

HiftStft CosyVoice2Stft() {
  // n_fft 16, hop 4, periodic Hann: cosyvoice2.yaml istft_params, generator.py:488.
  auto stft = HiftStft::Create(16, 4, audio::features::HannWindow(16, /*periodic=*/true));
  EXPECT_TRUE(stft.ok()) << stft.status();
  return *stft;
}

std::vector<float> Noise(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

TEST(HiftStftTest, ForwardThenInverseGivesTheSignalBack) {
  HiftStft stft = CosyVoice2Stft();
  std::vector<float> signal = Noise(960, 7);
  auto spec = stft.Forward(signal);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const int64_t frames = stft.Frames(960);
  ASSERT_EQ(frames, 241);
  ASSERT_EQ(spec->size(), static_cast<size_t>(18 * frames));
  std::vector<float> magnitude(9 * frames), phase(9 * frames);
  for (int64_t i = 0; i < 9 * frames; ++i) {
    float re = (*spec)[i], im = (*spec)[9 * frames + i];
    magnitude[i] = std::hypot(re, im);
    phase[i] = std::atan2(im, re);
  }
  auto back = stft.Inverse(magnitude, phase, frames, 1e9f);
  ASSERT_TRUE(back.ok()) << back.status();
  // float32 FFTs of 16 points on values ~1: a few ulps.
  EXPECT_LT(MaxAbsDiff(*back, signal), 1e-5);
}

TEST(HiftStftTest, ForwardMatchesUpstreamTorchStft) {
  VOXSERVE_REQUIRE_HIFT_ORACLES();
  HiftStft stft = CosyVoice2Stft();
  // The bundle's window is scipy's periodic Hann (generator.py:474); ours is equal to float.
  EXPECT_LT(MaxAbsDiff(audio::features::HannWindow(16, true), Oracle("stft_window")), 1e-7);
  auto spec = stft.Forward(Oracle("stft_signal"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  // |x| ~ 0.3, 16-term sums in float32: torch (pocketfft) and FFTW differ by ulps (~1e-7).
  EXPECT_LT(MaxAbsDiff(*spec, Oracle("stft_spec")), 1e-5);
}

TEST(HiftStftTest, InverseMatchesUpstreamIstftIncludingTheMagnitudeClip) {
  VOXSERVE_REQUIRE_HIFT_ORACLES();
  HiftStft stft = CosyVoice2Stft();
  std::vector<float> magnitude = Oracle("istft_magnitude");
  ASSERT_GT(*std::max_element(magnitude.begin(), magnitude.end()), 100.0f);  // the clip acts
  auto audio = stft.Inverse(magnitude, Oracle("istft_phase"), 1201, 100.0f);
  ASSERT_TRUE(audio.ok()) << audio.status();
  std::vector<float> want = Oracle("istft_audio");
  ASSERT_EQ(audio->size(), 4800u);
  // Values up to ~100 (clipped magnitudes): float32 rounding of ~1e-5 relative.
  EXPECT_LT(MaxAbsDiff(*audio, want), 1e-4);
  auto unclipped = stft.Inverse(magnitude, Oracle("istft_phase"), 1201, 1e9f);
  ASSERT_TRUE(unclipped.ok());
  EXPECT_GT(MaxAbsDiff(*unclipped, want), 1.0);  // the clip is what makes them agree
}

TEST(HiftStftTest, RefusesBadParametersAndShapes) {
  auto hann = audio::features::HannWindow(16, true);
  EXPECT_THAT(HiftStft::Create(15, 4, hann).status().message(), HasSubstr("even"));
  EXPECT_THAT(HiftStft::Create(16, 0, hann).status().message(), HasSubstr("hop"));
  EXPECT_THAT(HiftStft::Create(16, 4, std::vector<float>(8, 1.0f)).status().message(),
              HasSubstr("8 values"));
  EXPECT_THAT(HiftStft::Create(16, 16, std::vector<float>(16, 0.0f)).status().message(),
              HasSubstr("NOLA"));
  HiftStft stft = CosyVoice2Stft();
  EXPECT_THAT(stft.Forward(std::vector<float>(8, 0.0f)).status().message(),
              HasSubstr("more than 8 samples"));
  std::vector<float> nine(9, 1.0f);
  EXPECT_THAT(stft.Inverse(nine, nine, 2, 100.0f).status().message(), HasSubstr("[9, frames"));
  EXPECT_FALSE(stft.Inverse({}, {}, 0, 100.0f).ok());
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
