// The verify-bundle stages of the frontend (part 1's C++ port): prompt decoding and resampling
// (audio/), the three prompt features and the 2:1 alignment (cosyvoice/prompt_audio.h), and the
// bundle's tokenizer (text/bpe_tokenizer.h with CosyVoice2's special tokens).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "audio/audio_file_decoder.h"
#include "audio/resampler.h"
#include "core/error.h"
#include "engine/cosyvoice/bundle_verifier.h"
#include "engine/cosyvoice/prompt_audio.h"
#include "engine/cosyvoice/special_tokens.h"

namespace voxserve::engine::cosyvoice {
namespace {

using audio::features::FeatureMatrix;

absl::StatusOr<std::vector<float>> GoldenFloats(const GoldenStage& g, const std::string& key) {
  auto array = g.Input(key);
  if (!array.ok()) return array.status();
  if (array->dtype != "float32")
    return core::InvalidArgument("golden input '" + key + "' is not float32");
  return std::move(array->floats);
}

absl::StatusOr<double> Compare(const FeatureMatrix& found, const GoldenStage& g,
                               const std::string& key) {
  auto golden = g.Output(key);
  if (!golden.ok()) return golden.status();
  return MaxAbsError(found.values, *golden, g.name + "/" + key);
}

// The prompt recording of the goldens (goldens/prompt.wav), decoded and resampled to `rate`.
absl::StatusOr<std::vector<float>> PromptAt(const std::string& bundle_dir, int rate) {
  std::ifstream file(std::filesystem::path(bundle_dir) / "goldens" / "prompt.wav",
                     std::ios::binary);
  if (!file) return core::NotFound("goldens/prompt.wav is missing");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  auto pcm = audio::DecodeAudioFile(bytes);
  if (!pcm.ok()) return pcm.status();
  return audio::ResampleAll(pcm->samples, pcm->sample_rate, rate);
}

absl::StatusOr<double> DecodeStage(const GoldenStage& g, int rate) {
  auto samples = PromptAt(g.bundle_dir, rate);
  if (!samples.ok()) return samples.status();
  auto golden = g.Output("wav");
  if (!golden.ok()) return golden.status();
  // soxr and torchaudio's sinc resampler differ in their filters, so a sample-by-sample error
  // says little (docs/cosyvoice-frontend.md measures both on speech: ~2e-3 on tones in band,
  // far more near Nyquist). The length must agree to a sample; the figure reported is the RMS
  // difference, which the stage's tolerance bounds.
  if (static_cast<int64_t>(samples->size()) - static_cast<int64_t>(golden->floats.size()) > 1 ||
      static_cast<int64_t>(golden->floats.size()) - static_cast<int64_t>(samples->size()) > 1) {
    return core::InvalidArgument(g.name + ": " + std::to_string(samples->size()) +
                                 " samples, golden " + std::to_string(golden->floats.size()));
  }
  size_t n = std::min(samples->size(), golden->floats.size());
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    double d = (*samples)[i] - golden->floats[i];
    sum += d * d;
  }
  return n == 0 ? 0.0 : std::sqrt(sum / static_cast<double>(n));
}

}  // namespace

absl::Status AddFrontendStages(BundleVerifier& v) {
  v.AddStage("audio.decode_16k", [](const GoldenStage& g) { return DecodeStage(g, 16000); });
  v.AddStage("audio.decode_24k", [](const GoldenStage& g) { return DecodeStage(g, 24000); });
  v.AddStage("audio.fbank", [](const GoldenStage& g) -> absl::StatusOr<double> {
    auto wav = GoldenFloats(g, "wav");
    if (!wav.ok()) return wav.status();
    auto fbank = SpeakerFbank(*wav);
    if (!fbank.ok()) return fbank.status();
    return Compare(*fbank, g, "fbank");
  });
  v.AddStage("audio.whisper_logmel", [](const GoldenStage& g) -> absl::StatusOr<double> {
    auto wav = GoldenFloats(g, "wav");
    if (!wav.ok()) return wav.status();
    auto mel = SpeechTokenizerMel(*wav);
    if (!mel.ok()) return mel.status();
    return Compare(*mel, g, "logmel");
  });
  v.AddStage(
      "audio.prompt_mel",
      [fmax = v.manifest().audio.prompt_mel_fmax](const GoldenStage& g) -> absl::StatusOr<double> {
        auto wav = GoldenFloats(g, "wav");
        if (!wav.ok()) return wav.status();
        auto mel = CosyVoicePromptMel(*wav, fmax);
        if (!mel.ok()) return mel.status();
        return Compare(*mel, g, "mel");
      });
  v.AddStage("frontend.align", [](const GoldenStage& g) -> absl::StatusOr<double> {
    auto mel = g.Input("mel");
    auto tokens = g.Input("tokens");
    if (!mel.ok()) return mel.status();
    if (!tokens.ok()) return tokens.status();
    if (mel->shape.size() != 2) return core::InvalidArgument("frontend.align: mel is not [T, 80]");
    FeatureMatrix matrix;
    matrix.rows = static_cast<size_t>(mel->shape[0]);
    matrix.cols = static_cast<size_t>(mel->shape[1]);
    matrix.values = mel->floats;
    std::vector<int32_t> ids(tokens->ints.begin(), tokens->ints.end());
    AlignPromptTokensAndMel(&ids, &matrix);
    auto golden_tokens = g.Output("prompt_tokens");
    if (!golden_tokens.ok()) return golden_tokens.status();
    if (ids.size() != golden_tokens->ints.size() ||
        !std::equal(ids.begin(), ids.end(), golden_tokens->ints.begin())) {
      return core::InvalidArgument("frontend.align: the aligned tokens differ");
    }
    return Compare(matrix, g, "prompt_mel");
  });

  const BundleManifest& m = v.manifest();
  auto tokenizer = LoadTokenizer((std::filesystem::path(v.bundle_dir()) / m.tokenizer_dir).string(),
                                 TokenizerVersion::kCosyVoice2);
  if (!tokenizer.ok()) return tokenizer.status();
  std::shared_ptr<text::Qwen2Tokenizer> shared(std::move(*tokenizer));
  v.AddStage("text.tokens", [shared](const GoldenStage& g) -> absl::StatusOr<double> {
    auto ids = shared->Encode(g.note);  // the stage's note is its text (goldens.py)
    if (!ids.ok()) return ids.status();
    auto golden = g.Output("ids");
    if (!golden.ok()) return golden.status();
    if (ids->size() != golden->ints.size()) {
      return core::InvalidArgument(g.name + ": " + std::to_string(ids->size()) + " ids, golden " +
                                   std::to_string(golden->ints.size()));
    }
    double worst = 0;
    for (size_t i = 0; i < ids->size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>((*ids)[i] - golden->ints[i])));
    }
    return worst;
  });
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
