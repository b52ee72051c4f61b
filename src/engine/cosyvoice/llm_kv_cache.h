// CosyVoice's LLM KV cache in the memory the step graph computes in (docs/cosyvoice-generation.md,
// "KV cache and batching"): CUDA device memory with the CUDA provider, host memory with the CPU
// provider, by the same code. Allocated once through the allocator of a session on the step
// graph's provider; the step graph's GroupQueryAttention reads each row's filled slots and writes
// a run's new keys and values into the next ones in place (the buffer is bound as both past_* and
// present_*), so nothing of the cache is copied to or from the host, nor within the device.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/onnx/onnx_session.h"

namespace voxserve::engine::cosyvoice {

// Plain data: the cache's dimensions and element type (the step graph's past_key_0 type).
struct KvCacheShape {
  int layers = 0;        // decoder layers: 2 x layers buffers (keys, values)
  int64_t rows = 0;      // max_active: sequences held at once
  int64_t kv_heads = 0;  // key/value heads per layer
  int64_t capacity = 0;  // slots per row
  int64_t head_dim = 0;  // values per head and slot
  onnx::ElementType type = onnx::ElementType::kFloat;  // float32, float16 or bfloat16
};

// Owned by one LlmStepGraph (one engine worker thread): not thread-safe. Owns the session whose
// allocator its memory comes from.
//
// Layout: one buffer [2 x layers, rows, kv_heads, capacity, head_dim] (layer l's keys at index
// 2l, its values at 2l + 1), so the past_* input of the first n rows, or of one row, is one
// contiguous view; a row is a sequence's slot for its whole life (rows never move).
class KvCache {
 public:
  // Allocates the cache in the memory `step` computes in and zeroes it there (a device-side
  // fill: attention kernels may read a padded row's unfilled slots, and uninitialized memory
  // could hold NaNs).
  static absl::StatusOr<std::unique_ptr<KvCache>> Create(const onnx::OnnxSession& step,
                                                         const KvCacheShape& shape,
                                                         const onnx::OnnxSessionConfig& config);

  const KvCacheShape& shape() const { return shape_; }
  // Bytes of one slot of one row over every layer, keys and values.
  int64_t SlotBytes() const;
  int64_t Bytes() const { return shape_.rows * shape_.capacity * SlotBytes(); }

  // The step graph's past_key_<layer> (kind 0) or past_value_<layer> (kind 1) for rows
  // [first, first + count): [count, kv_heads, capacity, head_dim]; bound as present_* too.
  onnx::TensorView Rows(int layer, int kind, int64_t first, int64_t count) const;

 private:
  KvCache() = default;

  KvCacheShape shape_;
  // The session first: the buffer is its allocator's (freed before it).
  std::unique_ptr<onnx::OnnxSession> fill_;
  onnx::ProviderBuffer cache_;
};

}  // namespace voxserve::engine::cosyvoice
