#include "engine/cosyvoice/prompt_audio.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "audio/audio_file_decoder.h"
#include "audio/features/kaldi_fbank.h"
#include "audio/features/matcha_mel.h"
#include "audio/features/whisper_log_mel.h"
#include "audio/resampler.h"

namespace voxserve::engine::cosyvoice {
namespace {

// Rates of the two upstream branches: load_wav(prompt_wav, 16000) for the tokenizer and CAM++,
// load_wav(prompt_wav, 24000) for the flow's mel (CosyVoice2's sample_rate).
constexpr int kTokenizerRate = 16000;
constexpr int kFlowRate = 24000;
constexpr int kTokenizerMels = 128;  // frontend.py:98, log_mel_spectrogram(speech, n_mels=128)

// cosyvoice2.yaml / cosyvoice3.yaml feat_extractor (matcha.utils.audio.mel_spectrogram); fmax
// is the bundle's.
constexpr audio::features::MatchaMelConfig kPromptMelConfig{
    .sample_rate = kFlowRate, .n_fft = 1920, .hop = 480, .n_mels = 80, .fmin = 0.0, .fmax = 0.0};

absl::Status WithContext(const absl::Status& status, absl::string_view what) {
  return absl::Status(status.code(), absl::StrCat("prompt audio: ", what, ": ", status.message()));
}

}  // namespace

absl::StatusOr<PromptAudio> PreparePromptAudio(std::span<const uint8_t> encoded,
                                               const PromptAudioOptions& options) {
  audio::DecodeLimits decode_limits;
  decode_limits.max_seconds = options.max_seconds;  // refuse long files while decoding
  auto pcm = audio::DecodeAudioFile(encoded, decode_limits);
  if (!pcm.ok()) {
    return absl::Status(pcm.status().code(),
                        absl::StrCat("prompt audio: ", pcm.status().message()));
  }
  return PreparePromptAudio(*pcm, options);
}

absl::StatusOr<PromptAudio> PreparePromptAudio(const audio::PcmAudio& pcm,
                                               const PromptAudioOptions& options) {
  if (pcm.sample_rate < options.min_sample_rate) {
    return absl::InvalidArgumentError(
        absl::StrCat("prompt audio: sample rate ", pcm.sample_rate, " Hz is below the ",
                     options.min_sample_rate, " Hz CosyVoice needs; send the original recording"));
  }
  const double seconds = pcm.DurationSeconds();
  if (seconds > options.max_seconds) {
    return absl::OutOfRangeError(absl::StrCat("prompt audio is ", seconds, " s long; the limit is ",
                                              options.max_seconds, " s"));
  }
  if (seconds < options.min_seconds) {
    return absl::InvalidArgumentError(absl::StrCat(
        "prompt audio is ", seconds, " s long; at least ", options.min_seconds, " s are needed"));
  }
  float peak = 0.0f;
  for (float sample : pcm.samples) {
    if (!std::isfinite(sample)) {
      return absl::InvalidArgumentError("prompt audio holds a non-finite sample");
    }
    peak = std::max(peak, std::fabs(sample));
  }
  if (peak < options.silence_peak) {
    return absl::InvalidArgumentError(
        absl::StrCat("prompt audio has no speech: its peak level is below ",
                     std::lround(20.0 * std::log10(options.silence_peak)), " dBFS"));
  }

  PromptAudio prompt;
  prompt.source_sample_rate = pcm.sample_rate;
  prompt.duration_seconds = seconds;
  auto samples_16k = audio::ResampleAll(pcm.samples, pcm.sample_rate, kTokenizerRate);
  if (!samples_16k.ok()) return WithContext(samples_16k.status(), "resampling to 16 kHz");
  prompt.samples_16k = std::move(*samples_16k);
  auto samples_24k = audio::ResampleAll(pcm.samples, pcm.sample_rate, kFlowRate);
  if (!samples_24k.ok()) return WithContext(samples_24k.status(), "resampling to 24 kHz");
  prompt.samples_24k = std::move(*samples_24k);

  auto tokenizer_mel = SpeechTokenizerMel(prompt.samples_16k);
  if (!tokenizer_mel.ok()) return WithContext(tokenizer_mel.status(), "speech tokenizer log-mel");
  prompt.speech_tokenizer_mel = std::move(*tokenizer_mel);
  auto fbank = SpeakerFbank(prompt.samples_16k);
  if (!fbank.ok()) return WithContext(fbank.status(), "speaker fbank");
  prompt.speaker_fbank = std::move(*fbank);
  auto prompt_mel = CosyVoicePromptMel(prompt.samples_24k, options.prompt_mel_fmax);
  if (!prompt_mel.ok()) return WithContext(prompt_mel.status(), "24 kHz prompt mel");
  prompt.prompt_mel = std::move(*prompt_mel);
  return prompt;
}

absl::StatusOr<audio::features::FeatureMatrix> SpeechTokenizerMel(
    std::span<const float> samples_16k) {
  return audio::features::WhisperLogMel(samples_16k, kTokenizerMels);
}

absl::StatusOr<audio::features::FeatureMatrix> SpeakerFbank(std::span<const float> samples_16k) {
  // frontend.py:110-114: kaldi.fbank(num_mel_bins=80, dither=0, sample_frequency=16000), then
  // the mean over time subtracted (KaldiFbankOptions' defaults are exactly those).
  auto fbank = audio::features::KaldiFbank(samples_16k);
  if (!fbank.ok()) return fbank.status();
  audio::features::SubtractMeanOverTime(&*fbank);
  return fbank;
}

absl::StatusOr<audio::features::FeatureMatrix> CosyVoicePromptMel(
    std::span<const float> samples_24k, double fmax) {
  audio::features::MatchaMelConfig config = kPromptMelConfig;
  config.fmax = fmax;
  return audio::features::MatchaMelSpectrogram(samples_24k, config);
}

std::size_t AlignPromptTokensAndMel(std::vector<int32_t>* tokens,
                                    audio::features::FeatureMatrix* prompt_mel) {
  const std::size_t token_len = std::min(prompt_mel->rows / 2, tokens->size());
  tokens->resize(token_len);
  prompt_mel->rows = 2 * token_len;
  prompt_mel->values.resize(prompt_mel->rows * prompt_mel->cols);
  return token_len;
}

}  // namespace voxserve::engine::cosyvoice
