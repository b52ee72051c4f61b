// CosyVoice2's LLM KV cache in the memory the backbone computes in (docs/cosyvoice-generation.md,
// "KV cache and batching"): CUDA device memory with the CUDA provider, host memory with the CPU
// provider, by the same code. Allocated once through the allocator of a session on the
// backbone's provider (the cache's writer graph); the backbone reads it in place; a step's new keys
// and values go into their slots by ScatterND runs over that memory (the cache bound as both the
// data input and the output, so ORT writes only the updates), so nothing of the cache is copied to
// or from the host per step.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/onnx/onnx_session.h"

namespace voxserve::engine::cosyvoice {

// Plain data: the cache's dimensions.
struct KvCacheShape {
  int layers = 0;        // decoder layers: 2 x layers buffers (keys, values)
  int64_t rows = 0;      // max_active: sequences held at once
  int64_t kv_heads = 0;  // key/value heads per layer
  int64_t capacity = 0;  // slots per row
  int64_t head_dim = 0;  // values per head and slot
};

// What a cache operation moved, for LlmStepStats. Plain data.
struct KvCacheTraffic {
  onnx::HostTraffic host;     // slot indices and mask values sent from the host
  int64_t written_bytes = 0;  // new keys/values written into slots (in provider memory)
  int64_t moved_bytes = 0;    // slots copied from one row to another (in provider memory)
};

// Owned by one LlmDecoder (one engine worker thread): not thread-safe. Owns the graphs whose
// allocator its memory comes from.
//
// Layout: one buffer [2 x layers, rows, kv_heads, capacity, head_dim] (layer l's keys at index
// 2l, its values at 2l + 1), so each past_* input of the first n rows is one contiguous view;
// a decode mask [rows, 1, capacity + 1] beside it (1 = the slot holds this row's key; the last
// column is the new position), kept in step with the slots; and a scratch buffer the backbone
// writes its new_* outputs into, laid out [2 x layers, n, kv_heads, s, head_dim] so that one
// ScatterND takes a whole step's keys and values.
class KvCache {
 public:
  // Allocates and zeroes the cache in the memory `backbone` computes in (a device-side fill: masked
  // slots are still multiplied, and uninitialized memory could hold NaNs) and builds the writer,
  // mover and fill graphs.
  static absl::StatusOr<std::unique_ptr<KvCache>> Create(const onnx::OnnxSession& backbone,
                                                         const KvCacheShape& shape,
                                                         const onnx::OnnxSessionConfig& config);

  const KvCacheShape& shape() const { return shape_; }
  // Bytes of one slot of one row over every layer, keys and values.
  int64_t SlotBytes() const;

  // The backbone's past_key_<layer> (kind 0) or past_value_<layer> (kind 1) for rows
  // [first, first + count): [count, kv_heads, capacity, head_dim].
  onnx::TensorView Past(int layer, int kind, int64_t first, int64_t count) const;
  // The backbone's attention_mask of a decode step over rows [0, count): [count, 1, capacity+1].
  onnx::TensorView DecodeMask(int64_t count) const;
  // Scratch for a run over `count` rows of `s` new positions each (grows it when needed).
  absl::Status Reserve(int64_t count, int64_t s);
  // The backbone's new_key_<layer> / new_value_<layer> output for that run: [count, kv, s, D].
  onnx::TensorView Fresh(int layer, int kind, int64_t count, int64_t s) const;

  // Writes the last run's new keys and values (rows first .. first + count, s positions each)
  // into slots starts[r] .. starts[r] + s - 1 of each row and marks them in the decode mask.
  // `new_rows`: these rows are newcomers, whose masks are first set to exactly their slots
  // (an earlier sequence's marks in that row are no longer theirs). Internal when a slot would
  // pass the capacity.
  absl::Status Write(int64_t first, int64_t count, int64_t s, std::span<const int64_t> starts,
                     bool new_rows, KvCacheTraffic& traffic);
  // Row `to` takes row `from`'s slots and mask (the decoder keeps running rows compact). The
  // copy stays in provider memory; it moves whole rows (capacity slots), once per finished
  // sequence.
  absl::Status Move(int64_t from, int64_t to, KvCacheTraffic& traffic);

 private:
  KvCache() = default;
  int64_t LayerFloats() const;  // one layer-kind's buffer: rows x kv x capacity x D
  onnx::TensorView CacheView() const;
  onnx::TensorView MaskView() const;

  KvCacheShape shape_;
  // Sessions first: the buffers below are the writer's allocator's (destroyed before it).
  std::unique_ptr<onnx::OnnxSession> writer_, mover_, fill_;
  onnx::ProviderBuffer cache_, mask_, fresh_;
  int64_t fresh_positions_ = 0;  // count x s the scratch holds
  // Host staging of the indices and mask values, reused (no allocation per step).
  std::vector<int64_t> kv_indices_, mask_indices_;
  std::vector<float> mask_values_;
};

}  // namespace voxserve::engine::cosyvoice
