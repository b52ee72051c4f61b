// Streaming HiFT for one request: the vocoder half of CosyVoice2Model.token2wav's streaming
// path (cli/model.py:304-325), with its state (upstream's hift_cache_dict[uuid]) held here per
// request instead of in a dict shared by all requests.
#pragma once

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/cosyvoice/hift_vocoder.h"

namespace voxserve::engine::cosyvoice {

class HiftStream;

// One stream's chunk in a HiftStream::PushBatch call, as its Push takes it. Borrowed.
struct HiftPush {
  HiftStream* stream = nullptr;
  MelView mel;
  bool finalize = false;
  SourceNoise* noise = nullptr;
};

// Owned by one request's stream, used by one thread at a time; borrows the vocoder, which must
// outlive it. Each chunk: the previous chunk's last mel_cache_frames mel frames are put in front
// of the new mel, the previous source tail replaces the start of the new source, the first
// source_cache_samples of audio are cross-faded (Hamming, length 2 x cache) with the previous
// chunk's held-back tail, and the last source_cache_samples are held back until the next chunk
// (or returned by the final one). Concatenated, the chunks have 480 samples per mel frame pushed.
class HiftStream {
 public:
  // mel_cache_frames >= 1 and source_cache_samples = mel_cache_frames * 480 (CosyVoice2: 8 and
  // 3840, the manifest's streaming.mel_cache_len / source_cache_len), else InvalidArgument.
  static absl::StatusOr<HiftStream> Create(const HiftVocoder& vocoder, int mel_cache_frames,
                                           int source_cache_samples);

  // The chunk's new mel frames ([mel_bins, frames] row-major). A non-final chunk, with the mel
  // cache in front, must come to at least mel_cache_frames frames (the audio held back).
  // After the final chunk the stream refuses more (FailedPrecondition).
  absl::StatusOr<std::vector<float>> Push(MelView mel, bool finalize, SourceNoise& noise);
  // Several streams' chunks (distinct streams of one vocoder), each as its Push would: the same
  // audio and state, its own status, in input order. Chunks whose mels (cache in front) are of
  // equal length share the vocoder's graph calls (HiftVocoder::VocodeBatch).
  static std::vector<absl::StatusOr<std::vector<float>>> PushBatch(
      std::span<const HiftPush> pushes);

 private:
  HiftStream(const HiftVocoder& vocoder, int mel_cache_frames, int source_cache_samples);
  // The mel HiFT reads: the cached frames, then the chunk's ([bins, *frames] row-major).
  absl::StatusOr<std::vector<float>> Prepare(MelView chunk, bool finalize, int64_t* frames) const;
  // The chunk's audio from its vocoded mel; keeps the caches for the next chunk.
  std::vector<float> Finish(const std::vector<float>& mel, int64_t frames, bool finalize,
                            VocodedAudio out);

  const HiftVocoder* vocoder_;
  int mel_cache_frames_;
  int source_cache_samples_;
  std::vector<double> window_;  // np.hamming(2 * source_cache_samples), float64 as upstream's
  bool started_ = false, finished_ = false;
  std::vector<float> mel_cache_;     // [mel_bins, mel_cache_frames]
  std::vector<float> source_cache_;  // source_cache_samples
  std::vector<float> speech_cache_;  // source_cache_samples, the held-back audio
};

}  // namespace voxserve::engine::cosyvoice
