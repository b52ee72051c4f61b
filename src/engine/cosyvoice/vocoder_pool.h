// The threads that run CosyVoice's flow + HiFT off the LLM's step thread
// (docs/cosyvoice-generation.md, "The engine"): a runner posts the vocoding of a finished piece
// (or a ready streaming hop) here and its next Step goes on decoding the other segments.
#pragma once

#include <functional>
#include <memory>

#include "absl/status/statusor.h"

namespace voxserve::engine::cosyvoice {

// Owned by CosyVoiceEngine and shared by its runners; Post is safe cross thread. Jobs run in
// the order posted, up to threads() at once; a job owns (or shares) everything it reads except
// the engine's immutable stages, which outlive the pool. Destruction waits for the jobs running
// and drops (destroys without running) those not started.
class VocoderPool {
 public:
  // InvalidArgument unless 1 <= threads <= 64.
  static absl::StatusOr<std::unique_ptr<VocoderPool>> Create(int threads);
  ~VocoderPool();

  void Post(std::function<void()> job);
  int threads() const { return threads_; }

 private:
  struct Impl;
  VocoderPool(int threads, std::unique_ptr<Impl> impl);
  int threads_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace voxserve::engine::cosyvoice
