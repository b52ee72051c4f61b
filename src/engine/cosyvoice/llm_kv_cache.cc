#include "engine/cosyvoice/llm_kv_cache.h"

#include <string>
#include <vector>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {
namespace {

using onnx::ElementType;
using onnx::GraphSpec;
using onnx::TensorView;

// Zeros of a given length, written where the output is bound (ConstantOfShape's default value
// is a float 0). The cache is filled through a float32 view of its bytes: all-zero bits are 0 in
// float16 and bfloat16 too.
GraphSpec FillGraph() {
  GraphSpec g;
  g.name = "cosyvoice_kv_cache_fill";
  g.inputs = {{"shape", ElementType::kInt64, 1}};
  g.outputs = {{"zeros", ElementType::kFloat, 1}};
  g.nodes = {{"ConstantOfShape", {"shape"}, {"zeros"}, {}}};
  return g;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KvCache>> KvCache::Create(const onnx::OnnxSession& step,
                                                         const KvCacheShape& shape,
                                                         const onnx::OnnxSessionConfig& config) {
  if (shape.layers < 1 || shape.rows < 1 || shape.kv_heads < 1 || shape.capacity < 1 ||
      shape.head_dim < 1) {
    return core::InvalidArgument("KV cache: every dimension must be at least 1");
  }
  const size_t element = onnx::ElementBytes(shape.type);
  if (element != 4 && element != 2) {
    return core::InvalidArgument("KV cache: the step graph's cache is not float32/16");
  }
  std::unique_ptr<KvCache> c(new KvCache());
  c->shape_ = shape;
  onnx::OnnxSessionConfig plain = config;
  plain.cuda_graph = false;
  auto fill = onnx::OnnxSession::CreateFromGraph(FillGraph(), plain);
  if (!fill.ok()) return fill.status();
  c->fill_ = std::move(*fill);
  if (c->fill_->provider_memory_is_host() != step.provider_memory_is_host()) {
    return core::Internal("KV cache: the fill graph and " + step.path() +
                          " compute in different memories");
  }
  const int64_t bytes = c->Bytes();
  auto cache = c->fill_->AllocateProvider(static_cast<size_t>(bytes));
  if (!cache.ok()) return cache.status();
  c->cache_ = std::move(*cache);
  // Every size here is a multiple of 4 bytes: head_dim is (GroupQueryAttention wants 16k).
  std::vector<int64_t> floats = {bytes / 4};
  if (absl::Status s =
          c->fill_->RunInPlace({{"shape", {ElementType::kInt64, floats.data(), {1}}}},
                               {{"zeros", c->cache_.View(ElementType::kFloat, {floats[0]})}});
      !s.ok()) {
    return s;
  }
  return c;
}

int64_t KvCache::SlotBytes() const {
  return 2 * shape_.layers * shape_.kv_heads * shape_.head_dim *
         static_cast<int64_t>(onnx::ElementBytes(shape_.type));
}

TensorView KvCache::Rows(int layer, int kind, int64_t first, int64_t count) const {
  const KvCacheShape& s = shape_;
  const int64_t element = static_cast<int64_t>(onnx::ElementBytes(s.type));
  const int64_t row_bytes = s.kv_heads * s.capacity * s.head_dim * element;
  const int64_t offset = ((2 * layer + kind) * s.rows + first) * row_bytes;
  return cache_.View(s.type, {count, s.kv_heads, s.capacity, s.head_dim},
                     static_cast<size_t>(offset));
}

}  // namespace voxserve::engine::cosyvoice
