#include "engine/cosyvoice/hift_vocoder.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "engine/cosyvoice/npy.h"

namespace voxserve::engine::cosyvoice {
namespace {

absl::StatusOr<NpyArray> ReadTensor(const BundleManifest& m, const std::string& dir,
                                    const std::string& name, size_t want_size) {
  auto it = m.tensors.find(name);
  if (it == m.tensors.end()) return core::NotFound("bundle has no tensor " + name);
  auto array = ReadNpy((std::filesystem::path(dir) / it->second.file).string());
  if (!array.ok()) return array.status();
  if (array->dtype != "float32" || array->size() != want_size) {
    return core::InvalidArgument("tensor " + name + ": want " + std::to_string(want_size) +
                                 " float32 values, found " + std::to_string(array->size()) + " " +
                                 array->dtype);
  }
  return array;
}

absl::StatusOr<std::unique_ptr<onnx::OnnxSession>> OpenGraph(
    const BundleManifest& m, const std::string& dir, std::string_view role,
    const onnx::OnnxSessionConfig& config) {
  const GraphEntry* g = m.graph(role);
  if (g == nullptr) return core::NotFound("bundle has no graph " + std::string(role));
  return onnx::OnnxSession::Create((std::filesystem::path(dir) / g->file).string(), config);
}

}  // namespace

absl::StatusOr<std::unique_ptr<HiftVocoder>> HiftVocoder::Create(
    const BundleManifest& m, const std::string& dir, const onnx::OnnxSessionConfig& config) {
  const auto& h = m.hift;
  SineSourceParams params;
  params.sample_rate = m.audio.sample_rate;
  params.upsample_scale = h.upsample_scale;
  params.nb_harmonics = h.nb_harmonics;
  params.sine_amp = static_cast<float>(h.sine_amp);
  params.noise_std = static_cast<float>(h.noise_std);
  params.voiced_threshold = static_cast<float>(h.voiced_threshold);
  const auto sines = static_cast<size_t>(h.nb_harmonics + 1);
  auto weight = ReadTensor(m, dir, "hift_source_linear_weight", sines);
  if (!weight.ok()) return weight.status();
  auto bias = ReadTensor(m, dir, "hift_source_linear_bias", 1);
  if (!bias.ok()) return bias.status();
  auto window = ReadTensor(m, dir, "hift_stft_window", static_cast<size_t>(h.n_fft));
  if (!window.ok()) return window.status();
  params.linear_weight = weight->floats;
  params.linear_bias = bias->floats.at(0);
  auto source = SineSource::Create(std::move(params));
  if (!source.ok()) return source.status();
  auto stft = HiftStft::Create(h.n_fft, h.hop_len, window->floats);
  if (!stft.ok()) return stft.status();
  // The iSTFT must give back exactly samples_per_mel_frame per frame for the clamp and the cache
  // to line up (CosyVoice2: 120 STFT frames of hop 4 per 480-sample mel frame).
  if (h.upsample_scale % h.hop_len != 0) {
    return core::InvalidArgument("hift.upsample_scale must be a multiple of hift.hop_len");
  }
  std::unique_ptr<HiftVocoder> v(new HiftVocoder(std::move(*source), std::move(*stft)));
  auto f0 = OpenGraph(m, dir, "hift_f0", config);
  if (!f0.ok()) return f0.status();
  auto decoder = OpenGraph(m, dir, "hift_decoder", config);
  if (!decoder.ok()) return decoder.status();
  v->f0_ = std::move(*f0);
  v->decoder_ = std::move(*decoder);
  if (v->f0_->inputs().size() != 1 || v->decoder_->inputs().size() != 2 ||
      v->decoder_->outputs().size() != 2) {
    return core::InvalidArgument(
        "hift graphs: want f0 (mel) -> f0 and decoder (mel, "
        "source_stft) -> (magnitude, phase)");
  }
  // Addressed by position, named as the graphs name them (the manifest's order, checked by
  // check-model's RoleContracts).
  v->f0_input_ = v->f0_->inputs()[0].name;
  v->f0_output_ = v->f0_->outputs().at(0).name;
  v->decoder_mel_ = v->decoder_->inputs()[0].name;
  v->decoder_source_ = v->decoder_->inputs()[1].name;
  v->decoder_magnitude_ = v->decoder_->outputs()[0].name;
  v->decoder_phase_ = v->decoder_->outputs()[1].name;
  v->mel_bins_ = m.audio.mel_bins;
  v->audio_limit_ = static_cast<float>(h.audio_limit);
  return v;
}

absl::Status HiftVocoder::CheckFrames(int64_t frames) const {
  if (frames < 1 || frames > kMaxFrames) {
    return core::InvalidArgument("HiFT: mel has " + std::to_string(frames) + " frames, want 1.." +
                                 std::to_string(kMaxFrames));
  }
  return absl::OkStatus();
}

absl::Status HiftVocoder::CheckMel(MelView mel) const {
  if (absl::Status s = CheckFrames(mel.frames); !s.ok()) return s;
  if (mel.values.size() != static_cast<size_t>(mel_bins_ * mel.frames)) {
    return core::InvalidArgument("HiFT: mel has " + std::to_string(mel.values.size()) +
                                 " values, want [" + std::to_string(mel_bins_) + ", " +
                                 std::to_string(mel.frames) +
                                 "] = " + std::to_string(mel_bins_ * mel.frames));
  }
  for (size_t i = 0; i < mel.values.size(); ++i) {
    if (!std::isfinite(mel.values[i])) {
      return core::InvalidArgument("HiFT: mel value " + std::to_string(i) + " (bin " +
                                   std::to_string(i / mel.frames) + ", frame " +
                                   std::to_string(i % mel.frames) + ") is not finite");
    }
  }
  return absl::OkStatus();
}

namespace {

// A host mel as the graphs' [1, bins, frames] input, read in place (no copy).
onnx::TensorView HostMel(MelView mel, int bins) {
  return {onnx::ElementType::kFloat, const_cast<float*>(mel.values.data()), {1, bins, mel.frames}};
}

}  // namespace

absl::StatusOr<std::vector<float>> HiftVocoder::F0(MelView mel) const {
  if (absl::Status s = CheckMel(mel); !s.ok()) return s;
  return F0Of(HostMel(mel, mel_bins_), mel.frames);
}

absl::StatusOr<std::vector<float>> HiftVocoder::F0Of(const onnx::TensorView& mel,
                                                     int64_t frames) const {
  std::vector<float> f0(static_cast<size_t>(frames));
  absl::Status ran = f0_->RunInPlace(
      {{f0_input_, mel}}, {{f0_output_, {onnx::ElementType::kFloat, f0.data(), {1, frames}}}});
  if (!ran.ok()) return ran;
  return f0;
}

absl::StatusOr<std::vector<float>> HiftVocoder::Decode(MelView mel,
                                                       std::span<const float> source) const {
  if (absl::Status s = CheckMel(mel); !s.ok()) return s;
  return DecodeOf(HostMel(mel, mel_bins_), mel.frames, source);
}

absl::StatusOr<std::vector<float>> HiftVocoder::DecodeOf(const onnx::TensorView& mel,
                                                         int64_t mel_frames,
                                                         std::span<const float> source) const {
  const int64_t samples = mel_frames * samples_per_frame();
  if (source.size() != static_cast<size_t>(samples)) {
    return core::InvalidArgument("HiFT: source has " + std::to_string(source.size()) +
                                 " samples, the mel needs " + std::to_string(samples));
  }
  auto source_stft = stft_.Forward(source);
  if (!source_stft.ok()) return source_stft.status();
  const int64_t frames = stft_.Frames(samples);
  const int64_t bins = stft_.bins();
  std::vector<float> magnitude(static_cast<size_t>(bins * frames)), phase(magnitude.size());
  auto floats = [](std::vector<float>& v, std::vector<int64_t> shape) {
    return onnx::TensorView{onnx::ElementType::kFloat, v.data(), std::move(shape)};
  };
  absl::Status ran = decoder_->RunInPlace(
      {{decoder_mel_, mel}, {decoder_source_, floats(*source_stft, {1, 2 * bins, frames})}},
      {{decoder_magnitude_, floats(magnitude, {1, bins, frames})},
       {decoder_phase_, floats(phase, {1, bins, frames})}});
  if (!ran.ok()) return ran;
  // magnitude = exp(x) is clipped at 1e2 before the iSTFT (generator.py:500).
  auto audio = stft_.Inverse(magnitude, phase, frames, 100.0f);
  if (!audio.ok()) return audio.status();
  // torch.clamp(x, -audio_limit, audio_limit) (generator.py:537); NaN stays NaN in torch, and
  // cannot arise here from finite inputs and graphs.
  for (float& x : *audio) x = std::clamp(x, -audio_limit_, audio_limit_);
  return audio;
}

absl::StatusOr<VocodedAudio> HiftVocoder::Vocode(MelView mel, std::span<const float> cache_source,
                                                 SourceNoise& noise) const {
  if (absl::Status s = CheckMel(mel); !s.ok()) return s;
  return VocodeOf(HostMel(mel, mel_bins_), mel.frames, cache_source, noise);
}

absl::StatusOr<VocodedAudio> HiftVocoder::VocodeOnProvider(const onnx::TensorView& mel,
                                                           std::span<const float> cache_source,
                                                           SourceNoise& noise) const {
  if (mel.shape.size() != 3 || mel.shape[0] != 1 || mel.shape[1] != mel_bins_) {
    return core::InvalidArgument("HiFT: a provider mel must be [1, " + std::to_string(mel_bins_) +
                                 ", frames]");
  }
  if (absl::Status s = CheckFrames(mel.shape[2]); !s.ok()) return s;
  return VocodeOf(mel, mel.shape[2], cache_source, noise);
}

absl::StatusOr<VocodedAudio> HiftVocoder::VocodeOf(const onnx::TensorView& mel, int64_t frames,
                                                   std::span<const float> cache_source,
                                                   SourceNoise& noise) const {
  auto f0 = F0Of(mel, frames);
  if (!f0.ok()) return f0.status();
  auto source = source_.Source(*f0, noise);
  if (!source.ok()) return source.status();
  if (cache_source.size() > source->size()) {
    return core::InvalidArgument("HiFT: cache_source has " + std::to_string(cache_source.size()) +
                                 " samples, more than the " + std::to_string(source->size()) +
                                 " of this mel");
  }
  std::copy(cache_source.begin(), cache_source.end(), source->begin());
  auto audio = DecodeOf(mel, frames, *source);
  if (!audio.ok()) return audio.status();
  return VocodedAudio{std::move(*audio), std::move(*source)};
}

absl::StatusOr<std::vector<float>> ChangeMelSpeed(MelView mel, int bins, double speed,
                                                  int64_t* new_frames) {
  if (!std::isfinite(speed) || speed <= 0) {
    return core::InvalidArgument("speed must be finite and > 0, got " + std::to_string(speed));
  }
  if (bins < 1 || mel.frames < 1 || mel.values.size() != static_cast<size_t>(bins * mel.frames)) {
    return core::InvalidArgument("mel is not [" + std::to_string(bins) + ", frames >= 1]");
  }
  // int(tts_mel.shape[2] / speed): Python's true division in double, truncated.
  const auto out = static_cast<int64_t>(static_cast<double>(mel.frames) / speed);
  if (out < 1 || out > HiftVocoder::kMaxFrames) {
    return core::InvalidArgument("speed " + std::to_string(speed) + " turns " +
                                 std::to_string(mel.frames) + " mel frames into " +
                                 std::to_string(out) + ", want 1.." +
                                 std::to_string(HiftVocoder::kMaxFrames));
  }
  // A size, no scale_factor: ATen's scale is float(in) / out.
  const float scale = static_cast<float>(mel.frames) / static_cast<float>(out);
  std::vector<float> result;
  result.reserve(static_cast<size_t>(bins * out));
  for (int b = 0; b < bins; ++b) {
    std::vector<float> row = InterpolateLinear(
        mel.values.subspan(static_cast<size_t>(b * mel.frames), mel.frames), out, scale);
    result.insert(result.end(), row.begin(), row.end());
  }
  *new_frames = out;
  return result;
}

}  // namespace voxserve::engine::cosyvoice
