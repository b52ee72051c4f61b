#include "engine/cosyvoice/hift_stream.h"

#include <cmath>
#include <numbers>
#include <string>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {

absl::StatusOr<HiftStream> HiftStream::Create(const HiftVocoder& vocoder, int mel_cache_frames,
                                              int source_cache_samples) {
  if (mel_cache_frames < 1 || mel_cache_frames > 1000 ||
      source_cache_samples != mel_cache_frames * vocoder.samples_per_frame()) {
    return core::InvalidArgument(
        "HiFT stream: want mel_cache_frames in 1..1000 and source_cache_samples = frames x " +
        std::to_string(vocoder.samples_per_frame()) + ", got " + std::to_string(mel_cache_frames) +
        " and " + std::to_string(source_cache_samples));
  }
  return HiftStream(vocoder, mel_cache_frames, source_cache_samples);
}

HiftStream::HiftStream(const HiftVocoder& vocoder, int mel_cache_frames, int source_cache_samples)
    : vocoder_(&vocoder),
      mel_cache_frames_(mel_cache_frames),
      source_cache_samples_(source_cache_samples) {
  // np.hamming(M): 0.54 - 0.46 cos(2 pi n / (M - 1)) (model.py:267).
  const int m = 2 * source_cache_samples;
  window_.resize(static_cast<size_t>(m));
  for (int n = 0; n < m; ++n)
    window_[n] = 0.54 - 0.46 * std::cos(2 * std::numbers::pi * n / (m - 1));
}

absl::StatusOr<std::vector<float>> HiftStream::Push(MelView chunk, bool finalize,
                                                    SourceNoise& noise) {
  const HiftPush push{this, chunk, finalize, &noise};
  return std::move(PushBatch({&push, 1}).front());
}

std::vector<absl::StatusOr<std::vector<float>>> HiftStream::PushBatch(
    std::span<const HiftPush> pushes) {
  std::vector<absl::StatusOr<std::vector<float>>> out(pushes.size(), core::Internal("not pushed"));
  std::vector<size_t> ready;  // pushes with their mel prepared, in order
  std::vector<std::vector<float>> mels(pushes.size());
  std::vector<int64_t> frames(pushes.size(), 0);
  std::vector<VocodeInput> inputs;
  for (size_t k = 0; k < pushes.size(); ++k) {
    const HiftPush& push = pushes[k];
    if (push.stream->vocoder_ != pushes.front().stream->vocoder_) {
      out[k] = core::Internal("HiFT streams of different vocoders in one batch");
      continue;
    }
    auto mel = push.stream->Prepare(push.mel, push.finalize, &frames[k]);
    if (!mel.ok()) {
      out[k] = mel.status();
      continue;
    }
    mels[k] = *std::move(mel);
    ready.push_back(k);
    inputs.push_back({{mels[k], frames[k]}, push.stream->source_cache_, push.noise});
  }
  if (ready.empty()) return out;
  auto vocoded = pushes.front().stream->vocoder_->VocodeBatch(inputs);
  for (size_t r = 0; r < ready.size(); ++r) {
    const size_t k = ready[r];
    if (!vocoded[r].ok()) {
      out[k] = vocoded[r].status();
      continue;
    }
    out[k] =
        pushes[k].stream->Finish(mels[k], frames[k], pushes[k].finalize, *std::move(vocoded[r]));
  }
  return out;
}

absl::StatusOr<std::vector<float>> HiftStream::Prepare(MelView chunk, bool finalize,
                                                       int64_t* frames_out) const {
  if (finished_)
    return absl::FailedPreconditionError("HiFT stream: the final chunk was already pushed");
  const int bins = vocoder_->mel_bins();
  if (chunk.frames < 1 || chunk.values.size() != static_cast<size_t>(bins * chunk.frames)) {
    return core::InvalidArgument(
        "HiFT stream: chunk mel has " + std::to_string(chunk.values.size()) + " values, want [" +
        std::to_string(bins) + ", " + std::to_string(chunk.frames) + " >= 1]");
  }
  // tts_mel = concat([cache mel, chunk mel], dim=2) (model.py:305-307).
  const int64_t cached = started_ ? mel_cache_frames_ : 0;
  const int64_t frames = cached + chunk.frames;
  if (!finalize && frames < mel_cache_frames_) {
    return core::InvalidArgument("HiFT stream: a non-final chunk needs at least " +
                                 std::to_string(mel_cache_frames_ - cached) + " mel frames, got " +
                                 std::to_string(chunk.frames));
  }
  std::vector<float> mel(static_cast<size_t>(bins * frames));
  for (int b = 0; b < bins; ++b) {
    float* row = mel.data() + b * frames;
    if (cached > 0) std::copy_n(mel_cache_.begin() + b * cached, cached, row);
    std::copy_n(chunk.values.begin() + b * chunk.frames, chunk.frames, row + cached);
  }
  *frames_out = frames;
  return mel;
}

std::vector<float> HiftStream::Finish(const std::vector<float>& mel, int64_t frames, bool finalize,
                                      VocodedAudio out) {
  std::vector<float>& speech = out.audio;
  const auto n = static_cast<size_t>(source_cache_samples_);
  if (started_) {
    // fade_in_out (utils/common.py:170-178): float32 audio times the float64 window, summed in
    // float64 (torch promotes), stored back as float32.
    for (size_t i = 0; i < n; ++i) {
      speech[i] = static_cast<float>(double(speech[i]) * window_[i] +
                                     double(speech_cache_[i]) * window_[n + i]);
    }
  }
  started_ = true;
  if (finalize) {
    finished_ = true;
    return std::move(speech);
  }
  // Keep the last mel frames, source and audio samples; hold that audio back (model.py:315-318).
  const int bins = vocoder_->mel_bins();
  mel_cache_.resize(static_cast<size_t>(bins * mel_cache_frames_));
  for (int b = 0; b < bins; ++b) {
    std::copy_n(mel.begin() + b * frames + (frames - mel_cache_frames_), mel_cache_frames_,
                mel_cache_.begin() + b * mel_cache_frames_);
  }
  source_cache_.assign(out.source.end() - n, out.source.end());
  speech_cache_.assign(speech.end() - n, speech.end());
  speech.resize(speech.size() - n);
  return std::move(speech);
}

}  // namespace voxserve::engine::cosyvoice
