// PreparePromptAudio: the shapes and rates frontend.py produces, upstream's limits (>= 16 kHz,
// <= 30 s) and ours (silence, too short), and the CosyVoice2 2:1 token/mel alignment.
#include "engine/cosyvoice/prompt_audio.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sndfile.h>

#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "audio/sndfile_memory_output.h"
#include "unit/audio/feature_oracle.h"

namespace voxserve::engine::cosyvoice {
namespace {

using ::testing::HasSubstr;

// A voiced, syllable-shaped signal with a little noise: something with speech's spread.
std::vector<float> SpeechLike(int rate, double seconds) {
  std::mt19937 random(3);
  std::normal_distribution<float> noise(0.0f, 0.01f);
  std::vector<float> samples(static_cast<std::size_t>(std::lround(seconds * rate)));
  double phase = 0.0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double t = static_cast<double>(i) / rate;
    phase += 2 * std::numbers::pi * (140.0 + 30.0 * std::sin(2 * std::numbers::pi * t)) / rate;
    double voiced = 0.0;
    for (int k = 1; k <= 10; ++k) voiced += std::sin(k * phase) / k;
    const double envelope = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * 3.0 * t);
    samples[i] = static_cast<float>(0.25 * voiced * envelope) + noise(random);
  }
  return samples;
}

// `seconds` whole seconds of SpeechLike, one second repeated (cheaper to make than 30 s of sines).
std::vector<float> LongSpeechLike(int rate, int seconds, double extra_seconds = 0.0) {
  std::vector<float> second = SpeechLike(rate, 1.0);
  std::vector<float> samples;
  for (int i = 0; i < seconds; ++i) samples.insert(samples.end(), second.begin(), second.end());
  samples.resize(samples.size() + static_cast<std::size_t>(extra_seconds * rate), 0.1f);
  return samples;
}

std::string EncodeWav(const std::vector<float>& interleaved, int channels, int rate) {
  audio::SndfileMemoryOutput output;
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
  SNDFILE* file =
      sf_open_virtual(audio::SndfileMemoryOutput::VirtualIo(), SFM_WRITE, &info, &output);
  EXPECT_NE(file, nullptr) << sf_strerror(nullptr);
  if (file == nullptr) return {};
  sf_writef_float(file, interleaved.data(), static_cast<sf_count_t>(interleaved.size() / channels));
  sf_close(file);
  std::string bytes;
  output.TakeBytes(&bytes);
  return bytes;
}

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST(PromptAudioTest, ProducesTheThreeFeatureMatricesAtUpstreamsShapes) {
  auto prompt = PreparePromptAudio(Bytes(EncodeWav(SpeechLike(48000, 2.0), 1, 48000)));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_EQ(prompt->source_sample_rate, 48000);
  EXPECT_DOUBLE_EQ(prompt->duration_seconds, 2.0);
  EXPECT_EQ(prompt->samples_16k.size(), 32000u);
  EXPECT_EQ(prompt->samples_24k.size(), 48000u);
  // Whisper: 128 mels x (32000 / 160) frames, 100 per second.
  EXPECT_EQ(prompt->speech_tokenizer_mel.rows, 128u);
  EXPECT_EQ(prompt->speech_tokenizer_mel.cols, 200u);
  // Kaldi: 1 + (32000 - 400) / 160 frames x 80 bins, each bin's mean over time removed.
  EXPECT_EQ(prompt->speaker_fbank.rows, 198u);
  EXPECT_EQ(prompt->speaker_fbank.cols, 80u);
  for (std::size_t c = 0; c < 80; c += 13) {
    double mean = 0.0;
    for (std::size_t r = 0; r < prompt->speaker_fbank.rows; ++r)
      mean += prompt->speaker_fbank.at(r, c);
    EXPECT_NEAR(mean / prompt->speaker_fbank.rows, 0.0, 1e-4) << c;
  }
  // Matcha at 24 kHz: 1 + (48000 + 2 * 720 - 1920) / 480 frames = 100, 50 per second.
  EXPECT_EQ(prompt->prompt_mel.rows, 100u);
  EXPECT_EQ(prompt->prompt_mel.cols, 80u);
}

TEST(PromptAudioTest, KeepsSamplesAlreadyAtATargetRate) {
  std::vector<float> speech = SpeechLike(24000, 1.0);
  auto prompt = PreparePromptAudio(audio::PcmAudio{speech, 24000});
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_EQ(prompt->samples_24k, speech);  // upstream resamples only when the rates differ
  EXPECT_EQ(prompt->samples_16k.size(), 16000u);
}

TEST(PromptAudioTest, MixesAStereoPromptToMono) {
  std::vector<float> speech = SpeechLike(16000, 1.0);
  std::vector<float> stereo;
  for (float s : speech) {
    stereo.push_back(s);
    stereo.push_back(0.0f);
  }
  auto prompt = PreparePromptAudio(Bytes(EncodeWav(stereo, 2, 16000)));
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  ASSERT_EQ(prompt->samples_16k.size(), speech.size());
  EXPECT_FLOAT_EQ(prompt->samples_16k[1234], speech[1234] / 2);
}

TEST(PromptAudioTest, RefusesRatesBelow16kHzAsUpstreamDoes) {
  auto prompt = PreparePromptAudio(Bytes(EncodeWav(SpeechLike(8000, 1.0), 1, 8000)));
  EXPECT_EQ(prompt.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(prompt.status().message(), HasSubstr("8000 Hz is below the 16000 Hz"));
}

TEST(PromptAudioTest, RefusesPromptsLongerThan30Seconds) {
  auto prompt = PreparePromptAudio(Bytes(EncodeWav(LongSpeechLike(16000, 30, 0.5), 1, 16000)));
  EXPECT_EQ(prompt.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(prompt.status().message(), HasSubstr("30 s"));
  // The same from PCM, where the decoder's own limit does not apply.
  auto from_pcm = PreparePromptAudio(audio::PcmAudio{LongSpeechLike(16000, 30, 0.5), 16000});
  EXPECT_EQ(from_pcm.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(from_pcm.status().message(), HasSubstr("the limit is 30 s"));
}

TEST(PromptAudioTest, AcceptsExactly30Seconds) {
  auto prompt = PreparePromptAudio(audio::PcmAudio{LongSpeechLike(16000, 30), 16000});
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  EXPECT_EQ(prompt->speech_tokenizer_mel.cols, 3000u);
  EXPECT_EQ(prompt->prompt_mel.rows, 1500u);
}

TEST(PromptAudioTest, RefusesSilenceAsNoSpeech) {
  for (float level : {0.0f, 3e-4f}) {  // digital silence and noise at about -70 dBFS
    std::mt19937 random(5);
    std::uniform_real_distribution<float> noise(-level, level);
    std::vector<float> quiet(16000);
    for (float& s : quiet) s = noise(random);
    auto prompt = PreparePromptAudio(Bytes(EncodeWav(quiet, 1, 16000)));
    EXPECT_EQ(prompt.status().code(), absl::StatusCode::kInvalidArgument) << level;
    EXPECT_THAT(prompt.status().message(), HasSubstr("no speech"));
  }
}

TEST(PromptAudioTest, RefusesPromptsTooShortForTheFeatures) {
  auto prompt = PreparePromptAudio(audio::PcmAudio{SpeechLike(16000, 0.05), 16000});
  EXPECT_EQ(prompt.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(prompt.status().message(), HasSubstr("at least 0.1 s"));
}

TEST(PromptAudioTest, RefusesUndecodableUploadsSayingItIsThePrompt) {
  std::string garbage = "definitely not a wav file, just text";
  auto prompt = PreparePromptAudio(Bytes(garbage));
  EXPECT_EQ(prompt.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(prompt.status().message(), HasSubstr("prompt audio: "));
  EXPECT_EQ(PreparePromptAudio(std::span<const uint8_t>{}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The three features with the parameters of upstream's calls (frontend.py:98, 110, 122 with
// cosyvoice2.yaml's feat_extractor) against the feature oracles on the same 16 and 24 kHz samples
// (make_feature_oracles.py: torchaudio's kaldi.fbank as upstream calls it, Whisper's and Matcha's
// steps replayed in torch); the bounds are those features_test.cc justifies. Upstream's
// frontend.py itself is compared in tests/integration/test_onnx_cosyvoice_frontend_oracle.py.
TEST(PromptFeaturesTest, MatchUpstreamsFeaturesOnTheSameSamples) {
  if (auto reason = audio::testing::OraclesUnavailable()) GTEST_SKIP() << *reason;
  auto x16 = audio::testing::ReadOracle("signal_speechlike_16k");
  auto x24 = audio::testing::ReadOracle("signal_speechlike_24k");
  ASSERT_TRUE(x16.ok() && x24.ok());
  auto tokenizer_mel = SpeechTokenizerMel(x16->values);
  auto fbank = SpeakerFbank(x16->values);
  auto prompt_mel = CosyVoicePromptMel(x24->values);
  ASSERT_TRUE(tokenizer_mel.ok() && fbank.ok() && prompt_mel.ok());
  EXPECT_LT(audio::testing::MaxAbsDifference(*tokenizer_mel,
                                             *audio::testing::ReadOracle("whisper_speechlike")),
            1e-4);
  EXPECT_LT(
      audio::testing::MaxAbsDifference(*fbank, *audio::testing::ReadOracle("fbank_cmn_speechlike")),
      2e-3);
  EXPECT_LT(audio::testing::MaxAbsDifference(*prompt_mel,
                                             *audio::testing::ReadOracle("matcha_speechlike")),
            3e-4);
}

// CosyVoice3's prompt mel (cosyvoice3.yaml feat_extractor fmax: null, the Nyquist rate): the
// manifest's audio.prompt_mel_fmax reaches the mel, which differs from CosyVoice2's above 8 kHz.
TEST(PromptFeaturesTest, ACosyVoice3PromptMelGoesToTheNyquistRateAsUpstreams) {
  if (auto reason = audio::testing::OraclesUnavailable()) GTEST_SKIP() << *reason;
  auto x24 = audio::testing::ReadOracle("signal_speechlike_24k");
  ASSERT_TRUE(x24.ok());
  auto nyquist = CosyVoicePromptMel(x24->values, 12000.0);
  ASSERT_TRUE(nyquist.ok()) << nyquist.status();
  EXPECT_LT(audio::testing::MaxAbsDifference(
                *nyquist, *audio::testing::ReadOracle("matcha_nyquist_speechlike")),
            3e-4);
  EXPECT_GT(
      audio::testing::MaxAbsDifference(*nyquist, *audio::testing::ReadOracle("matcha_speechlike")),
      1e-2);
  // Through PreparePromptAudio, as CloneVoice passes the manifest's value.
  audio::PcmAudio pcm{x24->values, 24000};
  PromptAudioOptions options;
  options.prompt_mel_fmax = 12000.0;
  auto prompt = PreparePromptAudio(pcm, options);
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  auto direct = CosyVoicePromptMel(prompt->samples_24k, 12000.0);
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(prompt->prompt_mel.values, direct->values);
}

audio::features::FeatureMatrix NumberedMel(std::size_t rows) {
  audio::features::FeatureMatrix mel(rows, 80);
  for (std::size_t i = 0; i < mel.values.size(); ++i) mel.values[i] = static_cast<float>(i);
  return mel;
}

// frontend.py:176-178: token_len = min(int(mel_frames / 2), n_tokens).
TEST(AlignPromptTokensAndMelTest, CutsTheMelToTwiceTheTokensWhenTokensAreFewer) {
  std::vector<int32_t> tokens(30, 7);
  auto mel = NumberedMel(81);
  EXPECT_EQ(AlignPromptTokensAndMel(&tokens, &mel), 30u);
  EXPECT_EQ(tokens.size(), 30u);
  EXPECT_EQ(mel.rows, 60u);
  ASSERT_EQ(mel.values.size(), 60u * 80);
  EXPECT_EQ(mel.at(59, 79), 59.0f * 80 + 79);  // the first rows are kept
}

TEST(AlignPromptTokensAndMelTest, CutsTheTokensToHalfTheMelFramesRoundedDown) {
  std::vector<int32_t> tokens{1, 2, 3, 4, 5, 6, 7, 8};
  auto mel = NumberedMel(11);
  EXPECT_EQ(AlignPromptTokensAndMel(&tokens, &mel), 5u);
  EXPECT_EQ(tokens, (std::vector<int32_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(mel.rows, 10u);
}

TEST(AlignPromptTokensAndMelTest, NoTokensLeaveNoMel) {
  std::vector<int32_t> tokens;
  auto mel = NumberedMel(4);
  EXPECT_EQ(AlignPromptTokensAndMel(&tokens, &mel), 0u);
  EXPECT_EQ(mel.rows, 0u);
  EXPECT_TRUE(mel.values.empty());
}

}  // namespace
}  // namespace voxserve::engine::cosyvoice
