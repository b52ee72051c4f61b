#include "engine/cosyvoice/causal_hift_stream.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {

absl::StatusOr<CausalHiftStream> CausalHiftStream::Create(const HiftVocoder& vocoder) {
  if (!vocoder.causal()) {
    return absl::FailedPreconditionError(
        "CausalHiftStream needs CosyVoice3's causal HiFT (CosyVoice2's streams through "
        "HiftStream)");
  }
  return CausalHiftStream(vocoder);
}

absl::StatusOr<std::vector<float>> CausalHiftStream::Push(MelView mel, bool finalize) {
  if (finished_) return absl::FailedPreconditionError("HiFT stream: the final chunk was pushed");
  const int bins = vocoder_->mel_bins();
  if (mel.frames < 1 || mel.values.size() != static_cast<size_t>(bins * mel.frames)) {
    return core::InvalidArgument("HiFT stream: a chunk must be [" + std::to_string(bins) +
                                 ", frames >= 1]");
  }
  // The accumulated mel with the chunk's frames after each bin's (model.py:438-441).
  const int64_t frames = frames_ + mel.frames;
  std::vector<float> all(static_cast<size_t>(bins * frames));
  for (int b = 0; b < bins; ++b) {
    auto out = all.begin() + b * frames;
    out = std::copy_n(mel_.begin() + b * frames_, frames_, out);
    std::copy_n(mel.values.begin() + b * mel.frames, mel.frames, out);
  }
  auto audio = vocoder_->VocodeCausal({all, frames}, finalize);
  if (!audio.ok()) return audio.status();
  if (audio->size() < returned_) {
    return core::Internal("HiFT stream: the mel's audio shrank from " + std::to_string(returned_) +
                          " to " + std::to_string(audio->size()) + " samples");
  }
  // What upstream returns: tts_speech[:, speech_offset:] (model.py:448-449).
  std::vector<float> fresh(audio->begin() + static_cast<std::ptrdiff_t>(returned_), audio->end());
  returned_ = audio->size();
  mel_ = std::move(all);
  frames_ = frames;
  finished_ = finalize;
  return fresh;
}

}  // namespace voxserve::engine::cosyvoice
