// The feature building blocks' definitions and refusals, without an oracle: windows, padding,
// the FFT's threading contract and the minimum lengths each feature needs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "audio/features/kaldi_fbank.h"
#include "audio/features/matcha_mel.h"
#include "audio/features/mel_filterbank.h"
#include "audio/features/real_fft.h"
#include "audio/features/stft.h"
#include "audio/features/whisper_log_mel.h"
#include "audio/features/window.h"
#include "unit/audio/audio_test_support.h"

namespace voxserve::audio::features {
namespace {

TEST(WindowTest, HannIsPeriodicOrSymmetricAsTorchDefinesIt) {
  std::vector<float> periodic = HannWindow(4, true);  // torch.hann_window(4): 0, .5, 1, .5
  EXPECT_THAT(periodic, ::testing::Pointwise(::testing::FloatNear(1e-7f),
                                             std::vector<float>{0.0f, 0.5f, 1.0f, 0.5f}));
  std::vector<float> symmetric = HannWindow(5, false);  // 0, .5, 1, .5, 0
  EXPECT_THAT(symmetric, ::testing::Pointwise(::testing::FloatNear(1e-7f),
                                              std::vector<float>{0.0f, 0.5f, 1.0f, 0.5f, 0.0f}));
}

TEST(WindowTest, PoveyIsSymmetricHannToThePower085) {
  std::vector<float> povey = PoveyWindow(5);
  EXPECT_NEAR(povey[1], std::pow(0.5, 0.85), 1e-7);
  EXPECT_FLOAT_EQ(povey[2], 1.0f);
  EXPECT_FLOAT_EQ(povey[0], 0.0f);
}

TEST(ReflectPadTest, MirrorsWithoutRepeatingTheEdgeSample) {
  std::vector<float> x{1, 2, 3, 4};
  auto padded = ReflectPad(x, 2, 3);
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ(*padded, (std::vector<float>{3, 2, 1, 2, 3, 4, 3, 2, 1}));
  EXPECT_EQ(ReflectPad(x, 4, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PowerSpectrogramTest, PutsASineInItsBinWithTheExpectedPower) {
  // A 1 kHz sine at 16 kHz in a 400-point rectangular frame: bin 25, |X| = 200 * amplitude.
  std::vector<float> sine = testing::Sine(1000.0, 16000, 0.1, 0.5f);
  auto power = PowerSpectrogram(sine, 400, 160, std::vector<float>(400, 1.0f));
  ASSERT_TRUE(power.ok()) << power.status();
  EXPECT_EQ(power->rows, 1u + (sine.size() - 400) / 160);
  EXPECT_NEAR(power->at(0, 25), 100.0 * 100.0, 1.0);
  EXPECT_LT(power->at(0, 40), 1e-3);
}

TEST(PowerSpectrogramTest, RefusesAWindowOfTheWrongLengthAndABadHop) {
  std::vector<float> x(1000, 0.1f);
  EXPECT_FALSE(PowerSpectrogram(x, 400, 160, std::vector<float>(399, 1.0f)).ok());
  EXPECT_FALSE(PowerSpectrogram(x, 400, 0, std::vector<float>(400, 1.0f)).ok());
  EXPECT_FALSE(RealFft::Create(1).ok());
}

// c2r undoes r2c up to the factor size; the DC and Nyquist imaginary parts are dropped (as
// numpy/torch irfft), whatever FFTW would make of them.
TEST(InverseRealFftTest, UndoesRealFftAndIgnoresTheImaginaryPartsOfDcAndNyquist) {
  auto forward = RealFft::Create(16);
  auto inverse = InverseRealFft::Create(16);
  ASSERT_TRUE(forward.ok() && inverse.ok());
  EXPECT_FALSE(InverseRealFft::Create(1).ok());
  for (int i = 0; i < 16; ++i) (*forward)->input()[i] = std::sin(0.7f * i) + 0.1f * i;
  std::vector<float> signal((*forward)->input().begin(), (*forward)->input().end());
  (*forward)->Execute();
  std::copy((*forward)->output().begin(), (*forward)->output().end(), (*inverse)->input().begin());
  (*inverse)->input()[0].imag(5.0f);
  (*inverse)->input()[8].imag(-3.0f);
  (*inverse)->Execute();
  for (int i = 0; i < 16; ++i) EXPECT_NEAR((*inverse)->output()[i] / 16, signal[i], 1e-5) << i;
}

// Plans are made under a mutex and executed on each object's own buffers: features computed
// on several threads at once equal the single-threaded result.
TEST(RealFftTest, FeaturesOnSeveralThreadsEqualTheSingleThreadedResult) {
  std::vector<float> signal = testing::Sine(220.0, 16000, 0.5, 0.4f);
  auto expected = WhisperLogMel(signal);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::vector<FeatureMatrix> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&signal, &result] {
      auto features = WhisperLogMel(signal);
      if (features.ok()) result = *features;
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result.values, expected->values);
}

TEST(FeatureLengthTest, EachFeatureRefusesSignalsShorterThanItsPadding) {
  EXPECT_EQ(WhisperLogMel(std::vector<float>(200, 0.1f)).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(WhisperLogMel(std::vector<float>(201, 0.1f)).ok());
  EXPECT_EQ(KaldiFbank(std::vector<float>(399, 0.1f)).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto one_frame = KaldiFbank(std::vector<float>(400, 0.1f));
  ASSERT_TRUE(one_frame.ok()) << one_frame.status();
  EXPECT_EQ(one_frame->rows, 1u);
  MatchaMelConfig config{
      .sample_rate = 24000, .n_fft = 1920, .hop = 480, .n_mels = 80, .fmin = 0, .fmax = 8000};
  EXPECT_EQ(MatchaMelSpectrogram(std::vector<float>(720, 0.1f), config).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(MatchaMelSpectrogram(std::vector<float>(721, 0.1f), config).ok());
}

TEST(MelFilterbankTest, RefusesBandsOutsideNyquist) {
  EXPECT_FALSE(SlaneyMelFilterbank(16000, 400, 128, 0.0, 9000.0).ok());
  EXPECT_FALSE(SlaneyMelFilterbank(16000, 400, 0, 0.0, 8000.0).ok());
  EXPECT_FALSE(KaldiMelFilterbank(80, 512, 16000.0, 9000.0, 0.0).ok());
}

TEST(KaldiFbankTest, DigitalSilenceSitsAtTheEpsilonFloor) {
  auto fbank = KaldiFbank(std::vector<float>(1600, 0.0f));
  ASSERT_TRUE(fbank.ok()) << fbank.status();
  for (float value : fbank->values) EXPECT_FLOAT_EQ(value, std::log(1.1920929e-07f));
}

}  // namespace
}  // namespace voxserve::audio::features
