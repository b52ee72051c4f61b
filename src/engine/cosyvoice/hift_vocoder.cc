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
  if (m.tensors.contains("hift_noise_table")) {
    auto table =
        ReadNpy((std::filesystem::path(dir) / m.tensors.at("hift_noise_table").file).string());
    if (!table.ok()) return table.status();
    if (table->dtype != "float32" || table->shape.size() != 2 ||
        table->shape[1] != static_cast<int64_t>(sines)) {
      return core::InvalidArgument("tensor hift_noise_table: want float32 [rows, " +
                                   std::to_string(sines) + "], found " + table->dtype + " " +
                                   ShapeString(table->shape));
    }
    params.noise_table = std::make_shared<const std::vector<float>>(std::move(table->floats));
  }
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
  const bool causal = v->f0_->inputs().size() == 2;
  if ((v->f0_->inputs().size() != 1 && !causal) || v->decoder_->inputs().size() != 2 ||
      v->decoder_->outputs().size() != 2) {
    return core::InvalidArgument(
        "hift graphs: want f0 (mel[, context]) -> f0 and decoder (mel, "
        "source_stft) -> (magnitude, phase)");
  }
  if (causal) {
    // CosyVoice3: the predictor's right context is a static axis of its second input.
    const std::vector<int64_t>& shape = v->f0_->inputs()[1].shape;
    if (shape.size() != 3 || shape[2] < 1 || h.conv_pre_look_right < 1 || !v->source_.causal()) {
      return core::InvalidArgument(
          "hift_f0 takes a context, so this is CosyVoice3's causal HiFT: it needs a static "
          "context length, hift.conv_pre_look_right >= 1 and the tensor hift_noise_table");
    }
    v->f0_context_ = v->f0_->inputs()[1].name;
    v->f0_lookahead_ = shape[2];
    v->conv_pre_lookahead_ = h.conv_pre_look_right;
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
  v->batches_rows_ = v->f0_->inputs()[0].IsDynamic(0) && v->decoder_->inputs()[0].IsDynamic(0) &&
                     v->decoder_->inputs()[1].IsDynamic(0);
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

onnx::TensorView Floats(std::vector<float>& v, std::vector<int64_t> shape) {
  return {onnx::ElementType::kFloat, v.data(), std::move(shape)};
}

}  // namespace

absl::StatusOr<std::vector<float>> HiftVocoder::F0(MelView mel) const {
  if (absl::Status s = CheckMel(mel); !s.ok()) return s;
  return F0Of(HostMel(mel, mel_bins_), mel.frames);
}

absl::StatusOr<std::vector<float>> HiftVocoder::F0Of(const onnx::TensorView& mel,
                                                     int64_t frames) const {
  const int64_t rows = mel.shape[0];
  std::vector<float> f0(static_cast<size_t>(rows * frames));
  absl::Status ran =
      f0_->RunInPlace({{f0_input_, mel}}, {{f0_output_, Floats(f0, {rows, frames})}});
  if (!ran.ok()) return ran;
  return f0;
}

absl::StatusOr<std::vector<float>> HiftVocoder::Decode(MelView mel,
                                                       std::span<const float> source) const {
  if (absl::Status s = CheckMel(mel); !s.ok()) return s;
  std::vector<float> row(source.begin(), source.end());
  auto audio = DecodeOf(HostMel(mel, mel_bins_), mel.frames, {&row, 1});
  if (!audio.ok()) return audio.status();
  return std::move(audio->front());
}

absl::StatusOr<std::vector<std::vector<float>>> HiftVocoder::DecodeOf(
    const onnx::TensorView& mel, int64_t mel_frames,
    std::span<const std::vector<float>> sources) const {
  const int64_t samples = mel_frames * samples_per_frame();
  const int64_t frames = stft_.Frames(samples);
  const int64_t bins = stft_.bins();
  const auto rows = static_cast<int64_t>(sources.size());
  // The rows' source STFTs side by side: [rows, 2 * bins, frames].
  std::vector<float> source_stft;
  source_stft.reserve(static_cast<size_t>(rows * 2 * bins * frames));
  for (const std::vector<float>& source : sources) {
    if (source.size() != static_cast<size_t>(samples)) {
      return core::InvalidArgument("HiFT: source has " + std::to_string(source.size()) +
                                   " samples, the mel needs " + std::to_string(samples));
    }
    auto stft = stft_.Forward(source);
    if (!stft.ok()) return stft.status();
    source_stft.insert(source_stft.end(), stft->begin(), stft->end());
  }
  std::vector<float> magnitude(static_cast<size_t>(rows * bins * frames)), phase(magnitude.size());
  absl::Status ran = decoder_->RunInPlace(
      {{decoder_mel_, mel}, {decoder_source_, Floats(source_stft, {rows, 2 * bins, frames})}},
      {{decoder_magnitude_, Floats(magnitude, {rows, bins, frames})},
       {decoder_phase_, Floats(phase, {rows, bins, frames})}});
  decoder_calls_.fetch_add(1, std::memory_order_relaxed);
  if (!ran.ok()) return ran;
  std::vector<std::vector<float>> audios;
  const auto row_size = static_cast<size_t>(bins * frames);
  for (int64_t r = 0; r < rows; ++r) {
    // magnitude = exp(x) is clipped at 1e2 before the iSTFT (generator.py:500).
    auto audio = stft_.Inverse(std::span<const float>(magnitude).subspan(r * row_size, row_size),
                               std::span<const float>(phase).subspan(r * row_size, row_size),
                               frames, 100.0f);
    if (!audio.ok()) return audio.status();
    // torch.clamp(x, -audio_limit, audio_limit) (generator.py:537); NaN stays NaN in torch, and
    // cannot arise here from finite inputs and graphs.
    for (float& x : *audio) x = std::clamp(x, -audio_limit_, audio_limit_);
    audios.push_back(*std::move(audio));
  }
  return audios;
}

absl::StatusOr<VocodedAudio> HiftVocoder::Vocode(MelView mel, std::span<const float> cache_source,
                                                 SourceNoise& noise) const {
  if (absl::Status s = CheckMel(mel); !s.ok()) return s;
  const VocodeInput row{mel, cache_source, &noise};
  auto out = VocodeOf(HostMel(mel, mel_bins_), mel.frames, {&row, 1});
  if (!out.ok()) return out.status();
  return std::move(out->front());
}

absl::StatusOr<VocodedAudio> HiftVocoder::VocodeOnProvider(const onnx::TensorView& mel,
                                                           std::span<const float> cache_source,
                                                           SourceNoise& noise) const {
  if (mel.shape.size() != 3 || mel.shape[0] != 1 || mel.shape[1] != mel_bins_) {
    return core::InvalidArgument("HiFT: a provider mel must be [1, " + std::to_string(mel_bins_) +
                                 ", frames]");
  }
  if (absl::Status s = CheckFrames(mel.shape[2]); !s.ok()) return s;
  const VocodeInput row{{}, cache_source, &noise};
  auto out = VocodeOf(mel, mel.shape[2], {&row, 1});
  if (!out.ok()) return out.status();
  return std::move(out->front());
}

std::vector<absl::StatusOr<VocodedAudio>> HiftVocoder::VocodeBatch(
    std::span<const VocodeInput> inputs) const {
  std::vector<absl::StatusOr<VocodedAudio>> out(inputs.size(), core::Internal("not vocoded"));
  std::vector<bool> done(inputs.size(), false);
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (absl::Status s = CheckMel(inputs[k].mel); !s.ok()) {
      out[k] = s;
      done[k] = true;
    }
  }
  // Each pass takes the first mel not done and every later one of its length (one at a time
  // when the graphs take a single row).
  for (size_t first = 0; first < inputs.size(); ++first) {
    if (done[first]) continue;
    const int64_t frames = inputs[first].mel.frames;
    std::vector<size_t> group{first};
    for (size_t k = first + 1; batches_rows_ && k < inputs.size(); ++k) {
      if (!done[k] && inputs[k].mel.frames == frames) group.push_back(k);
    }
    std::vector<VocodeInput> rows;
    std::vector<float> mel;  // [rows, bins, frames]
    mel.reserve(group.size() * inputs[first].mel.values.size());
    for (size_t k : group) {
      rows.push_back(inputs[k]);
      mel.insert(mel.end(), inputs[k].mel.values.begin(), inputs[k].mel.values.end());
      done[k] = true;
    }
    const auto count = static_cast<int64_t>(group.size());
    auto vocoded = VocodeOf(Floats(mel, {count, mel_bins_, frames}), frames, rows);
    for (size_t r = 0; r < group.size(); ++r) {
      out[group[r]] = vocoded.ok() ? absl::StatusOr<VocodedAudio>(std::move((*vocoded)[r]))
                                   : absl::StatusOr<VocodedAudio>(vocoded.status());
    }
  }
  return out;
}

absl::StatusOr<std::vector<VocodedAudio>> HiftVocoder::VocodeOf(
    const onnx::TensorView& mel, int64_t frames, std::span<const VocodeInput> rows) const {
  auto f0 = F0Of(mel, frames);
  if (!f0.ok()) return f0.status();
  std::vector<std::vector<float>> sources;
  for (size_t r = 0; r < rows.size(); ++r) {
    auto source =
        source_.Source(std::span<const float>(*f0).subspan(r * frames, frames), *rows[r].noise);
    if (!source.ok()) return source.status();
    const std::span<const float> cache = rows[r].cache_source;
    if (cache.size() > source->size()) {
      return core::InvalidArgument("HiFT: cache_source has " + std::to_string(cache.size()) +
                                   " samples, more than the " + std::to_string(source->size()) +
                                   " of this mel");
    }
    std::copy(cache.begin(), cache.end(), source->begin());
    sources.push_back(*std::move(source));
  }
  auto audios = DecodeOf(mel, frames, sources);
  if (!audios.ok()) return audios.status();
  std::vector<VocodedAudio> out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out.push_back(VocodedAudio{std::move((*audios)[r]), std::move(sources[r])});
  }
  return out;
}

std::vector<float> MelFrames(MelView mel, int bins, int64_t first, int64_t count) {
  std::vector<float> out(static_cast<size_t>(bins * count), 0.0f);
  const int64_t copied = std::clamp<int64_t>(mel.frames - first, 0, count);
  for (int b = 0; b < bins; ++b) {
    std::copy_n(mel.values.begin() + b * mel.frames + first, copied, out.begin() + b * count);
  }
  return out;
}

absl::StatusOr<std::vector<float>> HiftVocoder::CausalF0(MelView mel, bool finalize) const {
  if (!causal()) return absl::FailedPreconditionError("HiFT: not CosyVoice3's causal vocoder");
  if (absl::Status s = CheckMel(mel); !s.ok()) return s;
  const int64_t frames = finalize ? mel.frames : mel.frames - f0_lookahead_;
  if (frames < 1) {
    return core::InvalidArgument("HiFT: a non-final mel needs more than " +
                                 std::to_string(f0_lookahead_) + " frames");
  }
  // f0_predictor(x, finalize) (f0_predictor.py:95-99): the first conv's right context is the
  // mel's next frames, or zeros when finalizing (CausalConv1d pads with zeros).
  std::vector<float> body = MelFrames(mel, mel_bins_, 0, frames);
  std::vector<float> context =
      finalize ? std::vector<float>(static_cast<size_t>(mel_bins_ * f0_lookahead_), 0.0f)
               : MelFrames(mel, mel_bins_, frames, f0_lookahead_);
  std::vector<float> f0(static_cast<size_t>(frames));
  absl::Status ran =
      f0_->RunInPlace({{f0_input_, Floats(body, {1, mel_bins_, frames})},
                       {f0_context_, Floats(context, {1, mel_bins_, f0_lookahead_})}},
                      {{f0_output_, Floats(f0, {1, frames})}});
  if (!ran.ok()) return ran;
  return f0;
}

absl::StatusOr<std::vector<float>> HiftVocoder::VocodeCausal(MelView mel, bool finalize) const {
  if (!causal()) return absl::FailedPreconditionError("HiFT: not CosyVoice3's causal vocoder");
  if (absl::Status s = CheckMel(mel); !s.ok()) return s;
  // Frames decoded: all when finalizing; otherwise those before both lookaheads
  // (generator.py:726-727 cuts the predictor's, decode's conv_pre the next 4, :677-680).
  const int64_t decoded = finalize ? mel.frames : mel.frames - f0_lookahead_ - conv_pre_lookahead_;
  if (!finalize && decoded <= 1) return std::vector<float>{};  // the last frame is dropped too
  auto f0 = CausalF0(mel, finalize);
  if (!f0.ok()) return f0.status();
  // The causal source draws nothing (its noise table stands in): all of it, from frame 0.
  auto excitation = source_.ExciteFrom(*f0, 0);
  if (!excitation.ok()) return excitation.status();
  auto source = source_.Merge(excitation->sines);
  if (!source.ok()) return source.status();
  return DecodeCausal(mel, *source, decoded, finalize);
}

absl::StatusOr<std::vector<float>> HiftVocoder::DecodeCausal(MelView mel,
                                                             std::span<const float> source,
                                                             int64_t decoded, bool finalize) const {
  if (!causal()) return absl::FailedPreconditionError("HiFT: not CosyVoice3's causal vocoder");
  if (decoded < 1 || decoded > mel.frames ||
      static_cast<int64_t>(source.size()) < decoded * samples_per_frame()) {
    return core::InvalidArgument("HiFT: " + std::to_string(decoded) +
                                 " frames to decode from a mel of " + std::to_string(mel.frames) +
                                 " and a source of " + std::to_string(source.size()) + " samples");
  }
  auto stft = stft_.Forward(source);
  if (!stft.ok()) return stft.status();
  // The source STFT's first columns, those of the decoded frames (generator.py:679-680).
  const int64_t columns = stft_.Frames(static_cast<int64_t>(source.size()));
  const int64_t kept = stft_.Frames(decoded * samples_per_frame());
  const int64_t rows = 2 * stft_.bins();
  std::vector<float> source_stft(static_cast<size_t>(rows * kept));
  for (int64_t r = 0; r < rows; ++r) {
    std::copy_n(stft->begin() + r * columns, kept, source_stft.begin() + r * kept);
  }
  // conv_pre's right context: the next mel frames, zeros when finalizing (generator.py:675-678).
  std::vector<float> x = MelFrames(mel, mel_bins_, 0, decoded + conv_pre_lookahead_);
  const int64_t bins = stft_.bins();
  std::vector<float> magnitude(static_cast<size_t>(bins * kept)), phase(magnitude.size());
  absl::Status ran = decoder_->RunInPlace(
      {{decoder_mel_, Floats(x, {1, mel_bins_, decoded + conv_pre_lookahead_})},
       {decoder_source_, Floats(source_stft, {1, rows, kept})}},
      {{decoder_magnitude_, Floats(magnitude, {1, bins, kept})},
       {decoder_phase_, Floats(phase, {1, bins, kept})}});
  decoder_calls_.fetch_add(1, std::memory_order_relaxed);
  if (!ran.ok()) return ran;
  auto audio = stft_.Inverse(magnitude, phase, kept, 100.0f);
  if (!audio.ok()) return audio.status();
  // A non-final call drops its last frame's samples (generator.py:702-703).
  if (!finalize) audio->resize(audio->size() - static_cast<size_t>(samples_per_frame()));
  for (float& v : *audio) v = std::clamp(v, -audio_limit_, audio_limit_);
  return *std::move(audio);
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
