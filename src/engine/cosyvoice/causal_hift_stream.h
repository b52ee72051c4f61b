// Streaming CosyVoice3 HiFT for one request: the vocoder half of CosyVoice3Model.token2wav
// (cli/model.py:436-453), with its state (upstream's hift_cache_dict[uuid]) held here per request.
// Upstream keeps every mel frame of the piece, vocodes all of them again at each hop (non-final
// until the last) and returns the audio past what it returned before. CausalHiFTGenerator is
// causal but for its lookaheads, so the chunks concatenate to the whole mel's audio.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/hift_vocoder.h"

namespace voxserve::engine::cosyvoice {

// Owned by one request's stream, used by one thread at a time; borrows the vocoder, which must
// outlive it. The work of a hop grows with the frames pushed so far, as upstream's does.
class CausalHiftStream {
 public:
  // FailedPrecondition for a vocoder that is not causal (CosyVoice2's: HiftStream).
  static absl::StatusOr<CausalHiftStream> Create(const HiftVocoder& vocoder);

  // Appends the chunk's mel ([mel_bins, frames] row-major, >= 1 frame) and returns the audio not
  // returned before: a non-final chunk's ends 8 frames before the mel pushed so far (the
  // lookaheads and the dropped frame), possibly empty; the final chunk's runs to the end. After
  // the final chunk the stream refuses more (FailedPrecondition). A bad chunk (InvalidArgument)
  // leaves the stream as it was.
  absl::StatusOr<std::vector<float>> Push(MelView mel, bool finalize);

  int64_t frames() const { return frames_; }

 private:
  explicit CausalHiftStream(const HiftVocoder& vocoder) : vocoder_(&vocoder) {}

  const HiftVocoder* vocoder_;
  std::vector<float> mel_;  // every frame pushed, [mel_bins, frames_] row-major
  int64_t frames_ = 0;
  size_t returned_ = 0;  // samples returned so far
  bool finished_ = false;
};

}  // namespace voxserve::engine::cosyvoice
