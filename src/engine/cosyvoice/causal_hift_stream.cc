#include "engine/cosyvoice/causal_hift_stream.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {
namespace {

// The f0 predictor's receptive field to the left: its 4 left-causal convolutions of kernel 3
// after the first (f0_predictor.py:76-91), 2 frames each.
constexpr int64_t kF0LeftFrames = 8;

}  // namespace

absl::StatusOr<CausalHiftStream> CausalHiftStream::Create(const HiftVocoder& vocoder,
                                                          int64_t left_context_frames) {
  if (!vocoder.causal()) {
    return absl::FailedPreconditionError(
        "CausalHiftStream needs CosyVoice3's causal HiFT (CosyVoice2's streams through "
        "HiftStream)");
  }
  if (left_context_frames < 1) {
    return core::InvalidArgument("CausalHiftStream: left_context_frames must be >= 1");
  }
  return CausalHiftStream(vocoder, left_context_frames);
}

absl::StatusOr<std::vector<float>> CausalHiftStream::Push(MelView mel, bool finalize) {
  if (finished_) return absl::FailedPreconditionError("HiFT stream: the final chunk was pushed");
  const int bins = vocoder_->mel_bins();
  if (mel.frames < 1 || mel.values.size() != static_cast<size_t>(bins * mel.frames)) {
    return core::InvalidArgument("HiFT stream: a chunk must be [" + std::to_string(bins) +
                                 ", frames >= 1]");
  }
  if (frames_ + mel.frames > HiftVocoder::kMaxFrames) {
    return core::InvalidArgument("HiFT stream: more than " +
                                 std::to_string(HiftVocoder::kMaxFrames) + " frames");
  }
  // The held frames with the chunk's after them (model.py:438-441 keeps all of them).
  const int64_t held = frames_ - mel_first_, total = frames_ + mel.frames;
  const int64_t window = held + mel.frames;  // frames [mel_first_, total)
  std::vector<float> all(static_cast<size_t>(bins * window));
  for (int b = 0; b < bins; ++b) {
    auto out = std::copy_n(mel_.begin() + b * held, held, all.begin() + b * window);
    std::copy_n(mel.values.begin() + b * mel.frames, mel.frames, out);
  }
  // What upstream's call returns ends here (generator.py:702-703, :726-727).
  const int64_t end =
      finalize ? total : total - vocoder_->f0_lookahead() - vocoder_->conv_pre_lookahead() - 1;
  std::vector<float> fresh;
  std::vector<float> f0 = f0_;
  last_vocoded_frames_ = 0;
  if (end > returned_) {
    // The f0 not final yet: from the first frame without it, with the predictor's left context
    // (zeros before frame 0, as upstream's padding); the values it had to guess are dropped.
    const int64_t f0_end = finalize ? total : total - vocoder_->f0_lookahead();
    const auto have = static_cast<int64_t>(f0.size());
    const int64_t from = std::max<int64_t>(0, have - kF0LeftFrames);
    auto more = vocoder_->CausalF0(
        {MelFrames({all, window}, bins, from - mel_first_, total - from), total - from}, finalize);
    if (!more.ok()) return more.status();
    f0.insert(f0.end(), more->begin() + (have - from), more->begin() + (f0_end - from));
    // The decode window: the frames not returned and the left context before them.
    const int64_t first = std::max<int64_t>(0, returned_ - left_context_);
    auto excitation = vocoder_->sine_source().ExciteFrom(f0, first);
    if (!excitation.ok()) return excitation.status();
    auto source = vocoder_->sine_source().Merge(excitation->sines);
    if (!source.ok()) return source.status();
    const int64_t decoded = (finalize ? total : end + 1) - first;
    auto audio = vocoder_->DecodeCausal(
        {MelFrames({all, window}, bins, first - mel_first_, total - first), total - first}, *source,
        decoded, finalize);
    if (!audio.ok()) return audio.status();
    const auto skip = static_cast<size_t>((returned_ - first) * vocoder_->samples_per_frame());
    fresh.assign(audio->begin() + static_cast<std::ptrdiff_t>(skip), audio->end());
    last_vocoded_frames_ = total - first;
  } else {
    // Nothing to return yet; the chunk's values are still checked before they are kept.
    for (float v : mel.values) {
      if (!std::isfinite(v)) return core::InvalidArgument("HiFT stream: a mel value is not finite");
    }
  }
  // Commit: keep the frames a later hop can read (its decode window and the f0's left context).
  const int64_t next_returned = std::max(returned_, end);
  const int64_t keep_from = std::max<int64_t>(
      mel_first_,
      std::min(next_returned - left_context_, static_cast<int64_t>(f0.size()) - kF0LeftFrames));
  mel_ = MelFrames({all, window}, bins, keep_from - mel_first_, total - keep_from);
  mel_first_ = keep_from;
  frames_ = total;
  f0_ = std::move(f0);
  returned_ = next_returned;
  finished_ = finalize;
  return fresh;
}

}  // namespace voxserve::engine::cosyvoice
