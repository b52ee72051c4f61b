#include "engine/cosyvoice/llm_kv_cache.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {
namespace {

using onnx::ElementType;
using onnx::GraphSpec;
using onnx::TensorView;

// data[indices] = updates, with the output bound to data's own memory: ORT's ScatterND (CPU and
// CUDA) copies data to the output only when the two differ, so only the updates are written.
GraphSpec WriterGraph() {
  GraphSpec g;
  g.name = "cosyvoice_kv_cache_writer";
  g.inputs = {{"cache", ElementType::kFloat, 5},        {"kv_indices", ElementType::kInt64, 5},
              {"new_kv", ElementType::kFloat, 5},       {"mask", ElementType::kFloat, 3},
              {"mask_indices", ElementType::kInt64, 2}, {"mask_values", ElementType::kFloat, 1}};
  g.outputs = {{"cache_out", ElementType::kFloat, 5}, {"mask_out", ElementType::kFloat, 3}};
  g.nodes = {{"ScatterND", {"cache", "kv_indices", "new_kv"}, {"cache_out"}, {}},
             {"ScatterND", {"mask", "mask_indices", "mask_values"}, {"mask_out"}, {}}};
  return g;
}

// One row's slots and mask into another row's place, in place as the writer.
GraphSpec MoverGraph() {
  GraphSpec g;
  g.name = "cosyvoice_kv_cache_mover";
  g.inputs = {{"cache", ElementType::kFloat, 5},     {"kv_from", ElementType::kInt64, 2},
              {"kv_to", ElementType::kInt64, 2},     {"mask", ElementType::kFloat, 3},
              {"mask_from", ElementType::kInt64, 2}, {"mask_to", ElementType::kInt64, 2}};
  g.outputs = {{"cache_out", ElementType::kFloat, 5}, {"mask_out", ElementType::kFloat, 3}};
  g.nodes = {{"GatherND", {"cache", "kv_from"}, {"kv_row"}, {}},
             {"ScatterND", {"cache", "kv_to", "kv_row"}, {"cache_out"}, {}},
             {"GatherND", {"mask", "mask_from"}, {"mask_row"}, {}},
             {"ScatterND", {"mask", "mask_to", "mask_row"}, {"mask_out"}, {}}};
  return g;
}

// Zeros of a given length, written where the output is bound (ConstantOfShape's default value
// is a float 0).
GraphSpec FillGraph() {
  GraphSpec g;
  g.name = "cosyvoice_kv_cache_fill";
  g.inputs = {{"shape", ElementType::kInt64, 1}};
  g.outputs = {{"zeros", ElementType::kFloat, 1}};
  g.nodes = {{"ConstantOfShape", {"shape"}, {"zeros"}, {}}};
  return g;
}

TensorView Host(std::vector<int64_t>& v, std::vector<int64_t> shape) {
  return {ElementType::kInt64, v.data(), std::move(shape)};
}

}  // namespace

absl::StatusOr<std::unique_ptr<KvCache>> KvCache::Create(const onnx::OnnxSession& backbone,
                                                         const KvCacheShape& shape,
                                                         const onnx::OnnxSessionConfig& config) {
  if (shape.layers < 1 || shape.rows < 1 || shape.kv_heads < 1 || shape.capacity < 1 ||
      shape.head_dim < 1) {
    return core::InvalidArgument("KV cache: every dimension must be at least 1");
  }
  std::unique_ptr<KvCache> c(new KvCache());
  c->shape_ = shape;
  for (auto [spec, session] : {std::pair{WriterGraph(), &c->writer_},
                               {MoverGraph(), &c->mover_},
                               {FillGraph(), &c->fill_}}) {
    auto created = onnx::OnnxSession::CreateFromGraph(spec, config);
    if (!created.ok()) return created.status();
    *session = std::move(*created);
  }
  if (c->writer_->provider_memory_is_host() != backbone.provider_memory_is_host()) {
    return core::Internal("KV cache: the writer graph and " + backbone.path() +
                          " compute in different memories");
  }
  const int64_t floats = 2 * shape.layers * c->LayerFloats();
  auto cache = c->writer_->AllocateProvider(static_cast<size_t>(floats) * sizeof(float));
  if (!cache.ok()) return cache.status();
  c->cache_ = std::move(*cache);
  const int64_t mask_floats = shape.rows * (shape.capacity + 1);
  auto mask = c->writer_->AllocateProvider(static_cast<size_t>(mask_floats) * sizeof(float));
  if (!mask.ok()) return mask.status();
  c->mask_ = std::move(*mask);
  for (auto [buffer, count] : {std::pair{&c->cache_, floats}, {&c->mask_, mask_floats}}) {
    std::vector<int64_t> length = {count};
    if (absl::Status s =
            c->fill_->RunInPlace({{"shape", Host(length, {1})}},
                                 {{"zeros", buffer->View(ElementType::kFloat, {count})}});
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = c->Reserve(shape.rows, 1); !s.ok()) return s;
  return c;
}

int64_t KvCache::LayerFloats() const {
  return shape_.rows * shape_.kv_heads * shape_.capacity * shape_.head_dim;
}

int64_t KvCache::SlotBytes() const {
  return 2 * shape_.layers * shape_.kv_heads * shape_.head_dim *
         static_cast<int64_t>(sizeof(float));
}

TensorView KvCache::CacheView() const {
  const KvCacheShape& s = shape_;
  return cache_.View(ElementType::kFloat,
                     {2 * s.layers, s.rows, s.kv_heads, s.capacity, s.head_dim});
}

TensorView KvCache::MaskView() const {
  return mask_.View(ElementType::kFloat, {shape_.rows, 1, shape_.capacity + 1});
}

TensorView KvCache::Past(int layer, int kind, int64_t first, int64_t count) const {
  const KvCacheShape& s = shape_;
  const int64_t row_floats = s.kv_heads * s.capacity * s.head_dim;
  const int64_t offset = (2 * layer + kind) * LayerFloats() + first * row_floats;
  return cache_.View(ElementType::kFloat, {count, s.kv_heads, s.capacity, s.head_dim},
                     static_cast<size_t>(offset) * sizeof(float));
}

TensorView KvCache::DecodeMask(int64_t count) const {
  return mask_.View(ElementType::kFloat, {count, 1, shape_.capacity + 1});
}

absl::Status KvCache::Reserve(int64_t count, int64_t s) {
  if (count * s <= fresh_positions_) return absl::OkStatus();
  // Decode steps need rows x 1; a prefill its prompt's positions: the scratch grows to the
  // longest prompt seen, once.
  const int64_t positions = std::max(count * s, shape_.rows);
  const int64_t floats = 2 * shape_.layers * positions * shape_.kv_heads * shape_.head_dim;
  fresh_ = {};
  auto fresh = writer_->AllocateProvider(static_cast<size_t>(floats) * sizeof(float));
  if (!fresh.ok()) return fresh.status();
  fresh_ = std::move(*fresh);
  fresh_positions_ = positions;
  return absl::OkStatus();
}

TensorView KvCache::Fresh(int layer, int kind, int64_t count, int64_t s) const {
  const KvCacheShape& sh = shape_;
  const int64_t per = count * sh.kv_heads * s * sh.head_dim;
  return fresh_.View(ElementType::kFloat, {count, sh.kv_heads, s, sh.head_dim},
                     static_cast<size_t>((2 * layer + kind) * per) * sizeof(float));
}

absl::Status KvCache::Write(int64_t first, int64_t count, int64_t s,
                            std::span<const int64_t> starts, bool new_rows,
                            KvCacheTraffic& traffic) {
  const KvCacheShape& sh = shape_;
  if (static_cast<int64_t>(starts.size()) != count || first + count > sh.rows) {
    return core::Internal("KV cache write: rows do not fit");
  }
  for (int64_t start : starts) {
    if (start < 0 || start + s > sh.capacity) {
      return core::Internal("KV cache write: slot " + std::to_string(start + s - 1) +
                            " is past the capacity " + std::to_string(sh.capacity));
    }
  }
  const int64_t kinds = 2 * sh.layers;
  // (layer-kind, row, head, slot) for every new key and value, in new_kv's order.
  kv_indices_.resize(static_cast<size_t>(kinds * count * sh.kv_heads * s * 4));
  size_t at = 0;
  for (int64_t j = 0; j < kinds; ++j) {
    for (int64_t r = 0; r < count; ++r) {
      for (int64_t h = 0; h < sh.kv_heads; ++h) {
        for (int64_t i = 0; i < s; ++i) {
          for (int64_t v : {j, first + r, h, starts[r] + i}) kv_indices_[at++] = v;
        }
      }
    }
  }
  // The mask: the new slots, or a newcomer's whole row (its slots, no others, and the column
  // of the new position that every decode step attends to).
  mask_indices_.clear();
  mask_values_.clear();
  for (int64_t r = 0; r < count; ++r) {
    const int64_t begin = new_rows ? 0 : starts[r];
    const int64_t end = new_rows ? sh.capacity + 1 : starts[r] + s;
    for (int64_t slot = begin; slot < end; ++slot) {
      for (int64_t v : {first + r, int64_t{0}, slot}) mask_indices_.push_back(v);
      const bool filled = slot == sh.capacity || (slot >= starts[r] && slot < starts[r] + s);
      mask_values_.push_back(filled ? 1.0f : 0.0f);
    }
  }
  const auto marks = static_cast<int64_t>(mask_values_.size());
  const TensorView fresh =
      fresh_.View(ElementType::kFloat, {kinds, count, sh.kv_heads, s, sh.head_dim});
  absl::Status status =
      writer_->RunInPlace({{"cache", CacheView()},
                           {"kv_indices", Host(kv_indices_, {kinds, count, sh.kv_heads, s, 4})},
                           {"new_kv", fresh},
                           {"mask", MaskView()},
                           {"mask_indices", Host(mask_indices_, {marks, 3})},
                           {"mask_values", {ElementType::kFloat, mask_values_.data(), {marks}}}},
                          {{"cache_out", CacheView()}, {"mask_out", MaskView()}}, &traffic.host);
  if (status.ok()) traffic.written_bytes += static_cast<int64_t>(fresh.Bytes());
  return status;
}

absl::Status KvCache::Move(int64_t from, int64_t to, KvCacheTraffic& traffic) {
  const KvCacheShape& sh = shape_;
  if (from < 0 || to < 0 || from >= sh.rows || to >= sh.rows) {
    return core::Internal("KV cache move: no such row");
  }
  const int64_t kinds = 2 * sh.layers, blocks = kinds * sh.kv_heads;
  std::vector<int64_t> kv_from, kv_to;
  kv_from.reserve(static_cast<size_t>(blocks * 3));
  kv_to.reserve(static_cast<size_t>(blocks * 3));
  for (int64_t j = 0; j < kinds; ++j) {
    for (int64_t h = 0; h < sh.kv_heads; ++h) {
      for (int64_t v : {j, from, h}) kv_from.push_back(v);
      for (int64_t v : {j, to, h}) kv_to.push_back(v);
    }
  }
  std::vector<int64_t> mask_from = {from, 0}, mask_to = {to, 0};
  absl::Status status =
      mover_->RunInPlace({{"cache", CacheView()},
                          {"kv_from", Host(kv_from, {blocks, 3})},
                          {"kv_to", Host(kv_to, {blocks, 3})},
                          {"mask", MaskView()},
                          {"mask_from", Host(mask_from, {1, 2})},
                          {"mask_to", Host(mask_to, {1, 2})}},
                         {{"cache_out", CacheView()}, {"mask_out", MaskView()}}, &traffic.host);
  if (status.ok()) traffic.moved_bytes += sh.capacity * SlotBytes();
  return status;
}

}  // namespace voxserve::engine::cosyvoice
