// The flow's Euler loop in the provider's memory (flow_matcher.h; docs/cosyvoice-generation.md,
// "Flow matching", "Buffers"): one call's estimator buffers, and the small graphs that run
// between estimator calls there (the CFG combination and Euler update, fills, copies, the mel's
// slice), so that on CUDA the state never goes back to the host between steps and the mel stays
// on the device until HiFT reads it. With the CPU provider the same code runs over host memory.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/onnx/onnx_session.h"

namespace voxserve::engine::cosyvoice {

// The graphs between estimator calls, built in memory (onnx::GraphSpec). Immutable after Create;
// safe cross thread (ORT's Run is), shared by every call of one FlowMatcher.
class FlowGlue {
 public:
  static absl::StatusOr<std::unique_ptr<FlowGlue>> Create(const onnx::OnnxSessionConfig& config);

  // Every element of `out` (a 1-D view) = value.
  absl::Status Fill(const onnx::TensorView& out, float value) const;
  // `to` = `from`, two rank-3 views of one shape, host or provider (ORT copies across).
  absl::Status Copy(const onnx::TensorView& from, const onnx::TensorView& to) const;
  // x_next = x + dt (w_cond v_cond - w_uncond v_uncond) for both rows of every CFG pair
  // (flow_matching.py:116-122: the pair's rows 2k, 2k + 1 share x; v = the estimator's output).
  // x, v, x_next: [2 pairs, bins, frames].
  absl::Status Euler(const onnx::TensorView& x, const onnx::TensorView& v,
                     const onnx::TensorView& x_next, float dt, float w_cond, float w_uncond) const;
  // `out` [1, bins, F] = `in` [1, bins, f] with F - f zero frames after it.
  absl::Status PadFrames(const onnx::TensorView& in, const onnx::TensorView& out) const;
  // `out` [1, bins, end - first] = row `row` of x [rows, bins, frames], frames [first, end).
  absl::Status SliceFrames(const onnx::TensorView& x, int64_t row, int64_t first, int64_t end,
                           const onnx::TensorView& out) const;

 private:
  FlowGlue() = default;
  std::unique_ptr<onnx::OnnxSession> fill_, copy_, euler_, slice_, pad_;
};

// One call's estimator buffers for `pairs` CFG row pairs of one length, in provider memory,
// allocated once and reused by all ten steps: mu, spks, cond and the mask are written once (the
// conditioned rows by the encoder and a copy of the prompt mel; the unconditioned rows stay
// zero), and each step only sends t [rows] from the host. Row 2k is pair k's conditioned row,
// 2k + 1 its unconditioned one (flow_matching.py:116). Owned by the call; must not outlive the
// estimator session it was allocated from.
class FlowBatch {
 public:
  static absl::StatusOr<FlowBatch> Create(const onnx::OnnxSession& estimator, const FlowGlue& glue,
                                          int pairs, int bins, int frames);

  // Pair k's conditioned row of mu [1, bins, frames] and spks [1, bins] (the encoder's outputs),
  // and of cond [1, bins, frames].
  onnx::TensorView Mu(int pair) const;
  onnx::TensorView Spks(int pair) const;
  onnx::TensorView Cond(int pair) const;
  // Pair k is a request of `valid` frames padded to the batch's: its mask rows are 0 after them,
  // so the estimator's attention never looks there (a length bucket; flow.py's mask).
  absl::Status SetValidFrames(int pair, int valid);
  // The Euler state's start, x [bins, frames] (host) in both rows of every pair: one upload.
  absl::Status SetNoise(std::span<const float> noise);
  // One estimator call at flow time t, then the Euler update by dt into the other state buffer.
  absl::Status Step(const onnx::OnnxSession& estimator, const std::string& output, float t,
                    float dt, float w_cond, float w_uncond);
  // The state [rows, bins, frames] (provider).
  onnx::TensorView X() const { return State(current_); }
  int64_t rows() const { return rows_; }

 private:
  FlowBatch() = default;
  onnx::TensorView State(int which) const;
  onnx::TensorView Plane(const onnx::ProviderBuffer& b, int64_t rows_shape) const;

  const FlowGlue* glue_ = nullptr;
  int64_t rows_ = 0, bins_ = 0, frames_ = 0;
  onnx::ProviderBuffer x_[2], v_, mu_, cond_, spks_, mask_;
  int current_ = 0;
  std::vector<float> t_;  // host: the only per-step input
};

}  // namespace voxserve::engine::cosyvoice
