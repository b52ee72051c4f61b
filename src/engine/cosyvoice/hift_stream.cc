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
  auto out = vocoder_->Vocode({mel, frames}, source_cache_, noise);
  if (!out.ok()) return out.status();
  std::vector<float>& speech = out->audio;
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
  mel_cache_.resize(static_cast<size_t>(bins * mel_cache_frames_));
  for (int b = 0; b < bins; ++b) {
    std::copy_n(mel.begin() + b * frames + (frames - mel_cache_frames_), mel_cache_frames_,
                mel_cache_.begin() + b * mel_cache_frames_);
  }
  source_cache_.assign(out->source.end() - n, out->source.end());
  speech_cache_.assign(speech.end() - n, speech.end());
  speech.resize(speech.size() - n);
  return std::move(speech);
}

}  // namespace voxserve::engine::cosyvoice
