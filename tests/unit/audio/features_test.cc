// The speech features against their oracles (torch / torchaudio on the same input; see
// make_feature_oracles.py), with the error bound each comparison allows and why.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "audio/features/kaldi_fbank.h"
#include "audio/features/matcha_mel.h"
#include "audio/features/mel_filterbank.h"
#include "audio/features/stft.h"
#include "audio/features/whisper_log_mel.h"
#include "audio/features/window.h"
#include "audio/resampler.h"
#include "unit/audio/feature_oracle.h"

namespace voxserve::audio::features {
namespace {

using testing::MaxAbs;
using testing::MaxAbsDifference;
using testing::ReadOracle;

class FeatureOracleTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (auto reason = testing::OraclesUnavailable()) GTEST_SKIP() << *reason;
    if (GetParam() != "speechlike" &&
        !std::ifstream(testing::OracleDir() + "/signal_" + GetParam() + "_16k.f32")) {
      GTEST_SKIP() << "no " << GetParam() << " signal (espeak-ng missing when oracles were made)";
    }
  }
  std::vector<float> Signal(const std::string& rate) {
    auto matrix = ReadOracle("signal_" + GetParam() + "_" + rate);
    EXPECT_TRUE(matrix.ok()) << matrix.status();
    return matrix.ok() ? matrix->values : std::vector<float>{};
  }
  FeatureMatrix Expected(const std::string& what) {
    auto matrix = ReadOracle(what + "_" + GetParam());
    EXPECT_TRUE(matrix.ok()) << matrix.status();
    return matrix.ok() ? *matrix : FeatureMatrix{};
  }
  void Report(const std::string& what, double error) {
    RecordProperty(what + "_" + GetParam() + "_max_abs_error", std::to_string(error));
    std::printf("%s on %s: max abs error %.3g\n", what.c_str(), GetParam().c_str(), error);
  }
};

// The STFT power (torch.stft, float32 both sides). FFT rounding grows with the frame's energy,
// so the bound is relative to the largest bin: 1e-5 of it, ~100 float32 ulps (a 400-point FFT
// has ~9 butterfly stages of rounding, and the two FFTs factor the size differently).
TEST_P(FeatureOracleTest, StftPowerMatchesTorchStft) {
  std::vector<float> x = Signal("16k");
  auto padded = ReflectPad(x, 200, 200);
  ASSERT_TRUE(padded.ok()) << padded.status();
  auto power = PowerSpectrogram(*padded, 400, 160, HannWindow(400, true));
  ASSERT_TRUE(power.ok()) << power.status();
  FeatureMatrix expected = Expected("stft");
  ASSERT_EQ(power->rows, expected.rows);
  ASSERT_EQ(power->cols, expected.cols);
  double relative = MaxAbsDifference(*power, expected) / MaxAbs(expected);
  Report("stft_power_relative", relative);
  EXPECT_LT(relative, 1e-5);
}

// Whisper log-mel: log10 turns relative error into absolute error (1e-5 relative in the mel
// energy is 4e-6 in log10), then /4; the max - 8 floor keeps tiny energies out. 1e-4 leaves
// room for the loudest-bin rounding of both FFTs and the mel sums.
TEST_P(FeatureOracleTest, WhisperLogMelMatchesWhisperRecipe) {
  auto log_mel = WhisperLogMel(Signal("16k"), 128);
  ASSERT_TRUE(log_mel.ok()) << log_mel.status();
  FeatureMatrix expected = Expected("whisper");
  ASSERT_EQ(log_mel->rows, 128u);
  ASSERT_EQ(log_mel->cols, expected.cols);
  double error = MaxAbsDifference(*log_mel, expected);
  Report("whisper_log_mel", error);
  EXPECT_LT(error, 1e-4);
}

// Kaldi fbank: natural log of the mel energies. Bins far below a frame's peak carry the FFT's
// rounding (relative to the peak) as a larger relative error; the floor FLT_EPSILON bounds
// how far below that gets. The bound is measured (see docs/cosyvoice-frontend.md).
TEST_P(FeatureOracleTest, KaldiFbankMatchesTorchaudio) {
  auto fbank = KaldiFbank(Signal("16k"));
  ASSERT_TRUE(fbank.ok()) << fbank.status();
  FeatureMatrix expected = Expected("fbank");
  ASSERT_EQ(fbank->cols, 80u);
  ASSERT_EQ(fbank->rows, expected.rows);
  double error = MaxAbsDifference(*fbank, expected);
  Report("kaldi_fbank", error);
  // Measured 1e-4 (synthetic) and 6e-4 (espeak-ng): 0.06% in energy, in the bands tens of dB
  // below a frame's peak. 2e-3 is far below what CAM++ can tell (its input is mean-normalized
  // logs of magnitude ~10).
  EXPECT_LT(error, 2e-3);

  SubtractMeanOverTime(&*fbank);
  double normalized_error = MaxAbsDifference(*fbank, Expected("fbank_cmn"));
  Report("kaldi_fbank_mean_normalized", normalized_error);
  EXPECT_LT(normalized_error, 2e-3);
}

// The 24 kHz prompt mel: sqrt(p + 1e-9) and the 1e-5 clamp keep the log away from rounding-
// dominated energies, so the error is the mel energy's relative error (~1e-6) in log units.
TEST_P(FeatureOracleTest, MatchaMelMatchesMatcha) {
  MatchaMelConfig config{
      .sample_rate = 24000, .n_fft = 1920, .hop = 480, .n_mels = 80, .fmin = 0, .fmax = 8000};
  auto mel = MatchaMelSpectrogram(Signal("24k"), config);
  ASSERT_TRUE(mel.ok()) << mel.status();
  FeatureMatrix expected = Expected("matcha");
  ASSERT_EQ(mel->cols, 80u);
  ASSERT_EQ(mel->rows, expected.rows);
  double error = MaxAbsDifference(*mel, expected);
  Report("matcha_mel", error);
  // Measured 4e-6 (synthetic) and 6e-5 (espeak-ng, whose quiet high bands sit nearest the
  // floor, where float32 rounding of torch's matmul weighs most); 3e-4 leaves a margin.
  EXPECT_LT(error, 3e-4);
}

INSTANTIATE_TEST_SUITE_P(Signals, FeatureOracleTest, ::testing::Values("speechlike", "espeak"));

class FilterbankOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = testing::OraclesUnavailable()) GTEST_SKIP() << *reason;
  }
};

// Filters computed in double here and in float32 by torchaudio: a few float32 ulps of the
// largest weight (Slaney weights are at most ~0.03, Kaldi's 1).
TEST_F(FilterbankOracleTest, SlaneyFiltersMatchTorchaudio) {
  for (auto [rate, n_fft, n_mels, name] :
       {std::tuple{16000, 400, 128, "melfb_slaney_16000_400_128"},
        std::tuple{24000, 1920, 80, "melfb_slaney_24000_1920_80"}}) {
    auto filters = SlaneyMelFilterbank(rate, n_fft, n_mels, 0.0, 8000.0);
    ASSERT_TRUE(filters.ok()) << filters.status();
    auto expected = ReadOracle(name);
    ASSERT_TRUE(expected.ok()) << expected.status();
    double relative = MaxAbsDifference(*filters, *expected) / MaxAbs(*expected);
    std::printf("%s: max abs error relative to the largest weight %.3g\n", name, relative);
    EXPECT_LT(relative, 1e-5) << name;
  }
}

TEST_F(FilterbankOracleTest, KaldiFiltersMatchTorchaudio) {
  auto filters = KaldiMelFilterbank(80, 512, 16000.0, 20.0, 0.0);
  ASSERT_TRUE(filters.ok()) << filters.status();
  auto expected = ReadOracle("melfb_kaldi_80_512");
  ASSERT_TRUE(expected.ok()) << expected.status();
  double error = MaxAbsDifference(*filters, *expected);
  std::printf("kaldi mel filters: max abs error %.3g\n", error);
  // torchaudio computes the mel points in float32: at ~2840 mel one ulp is 2.4e-4, ~8e-6 of a
  // 31-mel triangle side, so a few ulps are 5e-5 of a weight.
  EXPECT_LT(error, 5e-5);
}

// soxr (SOXR_HQ: passband to 91% of Nyquist) and torchaudio's Resample (Hann-windowed sinc,
// 6 zero crossings, rolloff 0.99) are different filters: they agree only where both pass the
// signal unchanged. So the comparison uses tones up to 6 kHz (75% of 16 kHz's Nyquist), away
// from the first and last 50 ms where the two treat the edges differently.
TEST_F(FilterbankOracleTest, ResamplingMatchesTorchaudioInBand) {
  auto tones = ReadOracle("tones_48000");
  ASSERT_TRUE(tones.ok()) << tones.status();
  for (int target : {16000, 24000}) {
    auto resampled = ResampleAll(tones->values, 48000, target);
    ASSERT_TRUE(resampled.ok()) << resampled.status();
    auto expected = ReadOracle("resampled_tones_" + std::to_string(target));
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_NEAR(static_cast<double>(resampled->size()), expected->values.size(), 1.0);
    const std::size_t edge = target / 20;
    double error = 0.0;
    for (std::size_t i = edge; i + edge < expected->values.size(); ++i) {
      error =
          std::max(error, std::fabs(static_cast<double>((*resampled)[i]) - expected->values[i]));
    }
    std::printf("48 kHz -> %d Hz tones: max abs error %.3g (peak %.3g)\n", target, error,
                MaxAbs(*expected));
    EXPECT_LT(error, 5e-3) << target;
  }
}

// Where two feature matrices of the same audio differ, counting only `rows` [0, row_end) (the
// mel bands inside both resamplers' passbands) and cells within `range` of the reference's
// peak (quieter cells are the resamplers' different rounding noise, magnified by the log).
double InBandError(const FeatureMatrix& a, const FeatureMatrix& reference, bool bands_are_rows,
                   std::size_t band_end, double range) {
  const double floor =
      MaxAbs(reference) > 0
          ? *std::max_element(reference.values.begin(), reference.values.end()) - range
          : 0.0;
  double error = 0.0;
  for (std::size_t r = 0; r < reference.rows; ++r) {
    for (std::size_t c = 0; c < reference.cols; ++c) {
      const std::size_t band = bands_are_rows ? r : c;
      if (band >= band_end || reference.at(r, c) < floor) continue;
      error = std::max(error, std::fabs(static_cast<double>(a.at(r, c)) - reference.at(r, c)));
    }
  }
  return error;
}

// The same recording resampled by soxr and by torchaudio (as upstream's load_wav does), through
// the Whisper log-mel and the 24 kHz prompt mel: what the choice of resampler changes in the
// features. The filters differ near Nyquist (soxr HQ passes 91% of it, torchaudio's rolloff is
// 0.99 with a wide transition), so the Whisper comparison stops at mel band 104 (~6.1 kHz, 76%
// of 8 kHz); the prompt mel stops at 8 kHz, far inside 24 kHz's band, so all of it counts. Cells
// more than 60 dB below the peak are left out: there the two resamplers' rounding noise differs
// and the log magnifies it (measured: up to 0.46 Whisper units in the top bands and in silence).
// Measured in band: 0.003 (Whisper), 0.014 (prompt mel: torchaudio's short sinc droops by
// ~0.6% towards 8 kHz, and the quietest counted cells carry the rest).
TEST_F(FilterbankOracleTest, FeaturesOfSoxrAndTorchaudioResamplingAgreeInBand) {
  auto source = ReadOracle("signal_espeak_source");
  if (!source.ok()) GTEST_SKIP() << "no espeak-ng recording among the oracles";
  const int source_rate = 22050;  // espeak-ng's output rate
  for (int target : {16000, 24000}) {
    auto ours = ResampleAll(source->values, source_rate, target);
    ASSERT_TRUE(ours.ok()) << ours.status();
    auto theirs = ReadOracle("resampled_espeak_" + std::to_string(target));
    ASSERT_TRUE(theirs.ok()) << theirs.status();
    ASSERT_NEAR(static_cast<double>(ours->size()), theirs->values.size(), 1.0);
    ours->resize(theirs->values.size());
    if (target == 16000) {
      auto a = WhisperLogMel(*ours);
      auto b = WhisperLogMel(theirs->values);
      ASSERT_TRUE(a.ok() && b.ok());
      // 60 dB of power is 6 in log10, 1.5 in Whisper's (x + 4) / 4 units.
      double error = InBandError(*a, *b, /*bands_are_rows=*/true, 104, 1.5);
      std::printf("Whisper log-mel, soxr vs torchaudio 22.05 -> 16 kHz, in band: %.3g\n", error);
      EXPECT_LT(error, 0.01);
    } else {
      MatchaMelConfig config{
          .sample_rate = 24000, .n_fft = 1920, .hop = 480, .n_mels = 80, .fmin = 0, .fmax = 8000};
      auto a = MatchaMelSpectrogram(*ours, config);
      auto b = MatchaMelSpectrogram(theirs->values, config);
      ASSERT_TRUE(a.ok() && b.ok());
      // 60 dB of magnitude is ln(1000) = 6.9 natural-log units.
      double error = InBandError(*a, *b, /*bands_are_rows=*/false, 80, 6.9);
      std::printf("prompt mel, soxr vs torchaudio 22.05 -> 24 kHz, in band: %.3g\n", error);
      EXPECT_LT(error, 0.03);
    }
  }
}

}  // namespace
}  // namespace voxserve::audio::features
