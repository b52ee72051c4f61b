// Streaming CosyVoice3 HiFT for one request: the vocoder half of CosyVoice3Model.token2wav
// (cli/model.py:436-453), with its state (upstream's hift_cache_dict[uuid]) held here per request.
// Upstream keeps every mel frame of the piece, vocodes all of them again at each hop (non-final
// until the last) and returns the audio past what it returned before, so a hop's work grows with
// the piece. CausalHiFTGenerator is causal but for its lookaheads, so this does the same with
// bounded work: each hop vocodes only the frames not yet returned, plus a left context wide
// enough for every convolution to see what it sees in the whole mel; the phase of the source
// still accumulates from the piece's first frame (from the f0 of every frame, kept), and its
// noise table is read from the hop's absolute sample. The chunks are the whole mel's audio.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/hift_vocoder.h"

namespace voxserve::engine::cosyvoice {

// Owned by one request's stream, used by one thread at a time; borrows the vocoder, which must
// outlive it. Holds the f0 of every frame (4 bytes each) and the last frames of the mel.
class CausalHiftStream {
 public:
  // Frames vocoded again before those not yet returned. Measured (causal_hift_test.cc, on
  // graphs with cosyvoice3.yaml's kernels, dilations and rates): 16 frames leave 5e-5 of error
  // at the window's start, 24 give the whole mel's audio to float rounding; 64 leaves a margin.
  static constexpr int64_t kLeftContextFrames = 64;

  // FailedPrecondition for a vocoder that is not causal (CosyVoice2's: HiftStream).
  // left_context_frames: tests only (kLeftContextFrames otherwise).
  static absl::StatusOr<CausalHiftStream> Create(const HiftVocoder& vocoder,
                                                 int64_t left_context_frames = kLeftContextFrames);

  // Appends the chunk's mel ([mel_bins, frames] row-major, >= 1 frame) and returns the audio not
  // returned before: a non-final chunk's ends 8 frames before the mel pushed so far (the
  // lookaheads, 3 + 4, and the frame upstream drops), possibly empty; the final chunk's runs to
  // the end. After the final chunk the stream refuses more (FailedPrecondition). A bad chunk
  // (InvalidArgument) leaves the stream as it was.
  absl::StatusOr<std::vector<float>> Push(MelView mel, bool finalize);

  int64_t frames() const { return frames_; }
  // Mel frames the last Push vocoded (bounded by the chunk, the lookaheads and the context).
  int64_t last_vocoded_frames() const { return last_vocoded_frames_; }

 private:
  CausalHiftStream(const HiftVocoder& vocoder, int64_t left_context_frames)
      : vocoder_(&vocoder), left_context_(left_context_frames) {}

  const HiftVocoder* vocoder_;
  int64_t left_context_;
  std::vector<float> mel_;  // frames [mel_first_, frames_), [mel_bins, that many] row-major
  int64_t mel_first_ = 0;   // the first frame still held
  int64_t frames_ = 0;      // frames pushed
  std::vector<float> f0_;   // the final f0 of frames [0, f0_.size())
  int64_t returned_ = 0;    // frames whose audio was returned
  int64_t last_vocoded_frames_ = 0;
  bool finished_ = false;
};

}  // namespace voxserve::engine::cosyvoice
