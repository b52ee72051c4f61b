// AAC-LC in an ADTS stream, encoded by libavcodec's native "aac" encoder.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/encoder.h"

struct AVCodecContext;
struct AVFrame;
struct AVPacket;

namespace voxserve::audio {

// Takes samples already at `sample_rate` (one of AAC's rates). The encoder works on frames of
// 1024 samples and starts with 1024 samples of priming; a decoder's output therefore begins with
// that much silence and ends padded to a whole frame. Streaming: each Encode emits the ADTS
// frames the encoder has finished; Finish emits the rest. Non-streaming: Finish emits all.
class AacEncoder final : public AudioEncoder {
 public:
  static absl::StatusOr<std::unique_ptr<AacEncoder>> Create(int sample_rate, bool streaming);
  ~AacEncoder() override;
  AacEncoder(const AacEncoder&) = delete;
  AacEncoder& operator=(const AacEncoder&) = delete;

  absl::Status Encode(std::span<const float> samples, std::string* out) override;
  absl::Status Finish(std::string* out) override;

 private:
  AacEncoder(int sampling_frequency_index, bool streaming);

  // Sends `count` samples as one frame (count <= frame size; only the last frame is short).
  absl::Status SendFrame(const float* samples, std::size_t count);
  // Moves every packet the encoder has ready into encoded_, each behind its ADTS header.
  absl::Status ReceivePackets();

  int sampling_frequency_index_;
  bool streaming_;
  bool finished_ = false;
  AVCodecContext* context_ = nullptr;  // owned
  AVFrame* frame_ = nullptr;           // owned
  AVPacket* packet_ = nullptr;         // owned
  std::int64_t next_pts_ = 0;          // in samples
  std::vector<float> clipped_;         // scratch for one chunk
  std::vector<float> pending_;         // samples not yet a whole frame
  std::string encoded_;                // ADTS bytes not yet handed out
};

}  // namespace voxserve::audio
