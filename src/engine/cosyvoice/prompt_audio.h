// CosyVoice2's zero-shot prompt audio: from an uploaded file to the three feature matrices its
// ONNX graphs and flow decoder take (cosyvoice/cli/frontend.py, _extract_speech_token,
// _extract_spk_embedding, _extract_speech_feat), and the 2:1 token/mel alignment rule.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "audio/features/feature_matrix.h"
#include "audio/pcm.h"

namespace voxserve::engine::cosyvoice {

// The flow's prompt mel's upper edge in CosyVoice2 (cosyvoice2.yaml feat_extractor fmax 8000);
// CosyVoice3's is null there, librosa's default: the Nyquist rate, 12000 Hz at 24 kHz
// (cosyvoice3.yaml). A bundle's manifest says which (audio.prompt_mel_fmax).
inline constexpr double kCosyVoice2PromptMelFmax = 8000.0;

// What a prompt must satisfy (the defaults are upstream's rules and ours), and the flow mel's
// setting.
struct PromptAudioOptions {
  // frontend.py:97 asserts the 16 kHz prompt is at most 30 s (the speech tokenizer's window).
  double max_seconds = 30.0;
  // Ours: below 0.1 s there are at most 2 speech tokens; every feature needs more than its
  // padding (24 kHz mel: 720 samples = 30 ms) anyway.
  double min_seconds = 0.1;
  // file_utils.py:48 load_wav refuses rates below 16 kHz (no upsampling of narrowband audio).
  int min_sample_rate = 16000;
  // Ours: a prompt whose peak stays below -60 dBFS (0.001) holds no speech to clone.
  float silence_peak = 1e-3f;
  // The prompt mel's upper edge in Hz (the manifest's audio.prompt_mel_fmax).
  double prompt_mel_fmax = kCosyVoice2PromptMelFmax;
};

// Owned by value. The features of one prompt, as frontend.py computes them.
struct PromptAudio {
  int source_sample_rate = 0;
  double duration_seconds = 0.0;
  std::vector<float> samples_16k;  // mono, soxr from the source rate (torchaudio upstream)
  std::vector<float> samples_24k;  // mono, soxr from the source rate, not from samples_16k (3.5)
  // Input 0 of speech_tokenizer_v2.onnx (add the batch axis): Whisper log-mel of samples_16k,
  // [128, size / 160]; input 1 is its column count.
  audio::features::FeatureMatrix speech_tokenizer_mel;
  // Input of campplus.onnx (add the batch axis): Kaldi fbank of samples_16k, 80 bins, each
  // bin's mean over time subtracted, [frames, 80].
  audio::features::FeatureMatrix speaker_fbank;
  // prompt_speech_feat of the flow: Matcha mel of samples_24k, [frames, 80], 50 frames/s
  // (feat_extractor: n_fft 1920, hop 480, win 1920, fmin 0, fmax PromptAudioOptions's).
  audio::features::FeatureMatrix prompt_mel;
};

// Decodes an uploaded prompt (WAV, FLAC, Ogg, MP3; see audio::DecodeAudioFile) and prepares it.
// Errors: InvalidArgument for undecodable data, a rate below min_sample_rate, audio shorter
// than min_seconds, or silence ("no speech"); OutOfRange naming the limit when longer than
// max_seconds. Thread-safe.
absl::StatusOr<PromptAudio> PreparePromptAudio(std::span<const uint8_t> encoded,
                                               const PromptAudioOptions& options = {});
// The same from decoded mono PCM at any rate.
absl::StatusOr<PromptAudio> PreparePromptAudio(const audio::PcmAudio& pcm,
                                               const PromptAudioOptions& options = {});

// The three features one at a time, for callers holding resampled audio already (e.g. the
// source speech of voice conversion, frontend.py frontend_vc). Each fails with InvalidArgument
// when the audio is shorter than the feature's padding.
absl::StatusOr<audio::features::FeatureMatrix> SpeechTokenizerMel(
    std::span<const float> samples_16k);  // [128, size / 160]
absl::StatusOr<audio::features::FeatureMatrix> SpeakerFbank(
    std::span<const float> samples_16k);  // [frames, 80], mean over time removed
absl::StatusOr<audio::features::FeatureMatrix> CosyVoicePromptMel(
    std::span<const float> samples_24k,
    double fmax = kCosyVoice2PromptMelFmax);  // [frames, 80]

// CosyVoice2's flow needs exactly two mel frames per speech token (frontend.py:175-178):
// token_len = min(mel frames / 2, token count); the mel keeps its first 2 * token_len rows and
// the tokens their first token_len. Returns token_len.
std::size_t AlignPromptTokensAndMel(std::vector<int32_t>* tokens,
                                    audio::features::FeatureMatrix* prompt_mel);

}  // namespace voxserve::engine::cosyvoice
