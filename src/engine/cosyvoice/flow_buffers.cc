#include "engine/cosyvoice/flow_buffers.h"

#include <algorithm>

#include "core/error.h"

namespace voxserve::engine::cosyvoice {
namespace {

using onnx::ElementType;
using onnx::GraphSpec;
using onnx::TensorView;

GraphSpec FillGraph() {
  GraphSpec g;
  g.name = "cosyvoice_flow_fill";
  g.inputs = {{"value", ElementType::kFloat, 1}, {"shape", ElementType::kInt64, 1}};
  g.outputs = {{"out", ElementType::kFloat, 1}};
  g.nodes = {{"Expand", {"value", "shape"}, {"out"}, {}}};
  return g;
}

GraphSpec CopyGraph() {
  GraphSpec g;
  g.name = "cosyvoice_flow_copy";
  g.inputs = {{"in", ElementType::kFloat, 3}};
  g.outputs = {{"out", ElementType::kFloat, 3}};
  g.nodes = {{"Identity", {"in"}, {"out"}, {}}};
  return g;
}

// The CFG combination and Euler step in upstream's order of operations (flow_matching.py:
// 118-122: dphi = (1 + cfg) v_cond - cfg v_uncond; x = x + dt dphi), on the pairs' view
// [pairs, 2, bins, frames]: the step is computed once per pair and added to both of its rows.
GraphSpec EulerGraph() {
  GraphSpec g;
  g.name = "cosyvoice_flow_euler";
  g.inputs = {{"x", ElementType::kFloat, 3},           {"v", ElementType::kFloat, 3},
              {"dt", ElementType::kFloat, 1},          {"w_cond", ElementType::kFloat, 1},
              {"w_uncond", ElementType::kFloat, 1},    {"pairs_shape", ElementType::kInt64, 1},
              {"state_shape", ElementType::kInt64, 1}, {"zero", ElementType::kInt64, 1},
              {"one", ElementType::kInt64, 1},         {"two", ElementType::kInt64, 1}};
  g.outputs = {{"x_next", ElementType::kFloat, 3}};
  g.nodes = {{"Reshape", {"v", "pairs_shape"}, {"v4"}, {}},
             {"Slice", {"v4", "zero", "one", "one"}, {"v_cond"}, {}},
             {"Slice", {"v4", "one", "two", "one"}, {"v_uncond"}, {}},
             {"Mul", {"v_cond", "w_cond"}, {"a"}, {}},
             {"Mul", {"v_uncond", "w_uncond"}, {"b"}, {}},
             {"Sub", {"a", "b"}, {"dphi"}, {}},
             {"Mul", {"dphi", "dt"}, {"step"}, {}},
             {"Reshape", {"x", "pairs_shape"}, {"x4"}, {}},
             {"Add", {"x4", "step"}, {"y4"}, {}},
             {"Reshape", {"y4", "state_shape"}, {"x_next"}, {}}};
  return g;
}

GraphSpec SliceGraph() {
  GraphSpec g;
  g.name = "cosyvoice_flow_slice";
  g.inputs = {{"x", ElementType::kFloat, 3},
              {"starts", ElementType::kInt64, 1},
              {"ends", ElementType::kInt64, 1},
              {"axes", ElementType::kInt64, 1}};
  g.outputs = {{"out", ElementType::kFloat, 3}};
  g.nodes = {{"Slice", {"x", "starts", "ends", "axes"}, {"out"}, {}}};
  return g;
}

// in [1, bins, frames] to out [1, bins, frames + pad]: zeros after the last frame.
GraphSpec PadGraph() {
  GraphSpec g;
  g.name = "cosyvoice_flow_pad";
  g.inputs = {{"in", ElementType::kFloat, 3}, {"pads", ElementType::kInt64, 1}};
  g.outputs = {{"out", ElementType::kFloat, 3}};
  g.nodes = {{"Pad", {"in", "pads"}, {"out"}, {}}};
  return g;
}

TensorView Ints(std::vector<int64_t>& v) {
  return {ElementType::kInt64, v.data(), {static_cast<int64_t>(v.size())}};
}

TensorView Scalar(float& v) { return {ElementType::kFloat, &v, {1}}; }

}  // namespace

absl::StatusOr<std::unique_ptr<FlowGlue>> FlowGlue::Create(const onnx::OnnxSessionConfig& config) {
  std::unique_ptr<FlowGlue> glue(new FlowGlue());
  for (auto [spec, session] : {std::pair{FillGraph(), &glue->fill_},
                               {CopyGraph(), &glue->copy_},
                               {EulerGraph(), &glue->euler_},
                               {SliceGraph(), &glue->slice_},
                               {PadGraph(), &glue->pad_}}) {
    auto created = onnx::OnnxSession::CreateFromGraph(spec, config);
    if (!created.ok()) return created.status();
    *session = std::move(*created);
  }
  return glue;
}

absl::Status FlowGlue::Fill(const TensorView& out, float value) const {
  std::vector<int64_t> shape = {static_cast<int64_t>(out.ElementCount())};
  return fill_->RunInPlace({{"value", Scalar(value)}, {"shape", Ints(shape)}}, {{"out", out}});
}

absl::Status FlowGlue::Copy(const TensorView& from, const TensorView& to) const {
  return copy_->RunInPlace({{"in", from}}, {{"out", to}});
}

absl::Status FlowGlue::Euler(const TensorView& x, const TensorView& v, const TensorView& x_next,
                             float dt, float w_cond, float w_uncond) const {
  if (x.shape.size() != 3 || x.shape[0] % 2 != 0) {
    return core::Internal("flow Euler step: the state is not [2 x pairs, bins, frames]");
  }
  std::vector<int64_t> pairs = {x.shape[0] / 2, 2, x.shape[1], x.shape[2]};
  std::vector<int64_t> state = x.shape, zero = {0}, one = {1}, two = {2};
  return euler_->RunInPlace({{"x", x},
                             {"v", v},
                             {"dt", Scalar(dt)},
                             {"w_cond", Scalar(w_cond)},
                             {"w_uncond", Scalar(w_uncond)},
                             {"pairs_shape", Ints(pairs)},
                             {"state_shape", Ints(state)},
                             {"zero", Ints(zero)},
                             {"one", Ints(one)},
                             {"two", Ints(two)}},
                            {{"x_next", x_next}});
}

absl::Status FlowGlue::PadFrames(const TensorView& in, const TensorView& out) const {
  if (in.shape.size() != 3 || out.shape.size() != 3 || out.shape[2] < in.shape[2]) {
    return core::Internal("flow pad: out is not in with frames appended");
  }
  std::vector<int64_t> pads = {0, 0, 0, 0, 0, out.shape[2] - in.shape[2]};
  return pad_->RunInPlace({{"in", in}, {"pads", Ints(pads)}}, {{"out", out}});
}

absl::Status FlowGlue::SliceFrames(const TensorView& x, int64_t row, int64_t first, int64_t end,
                                   const TensorView& out) const {
  std::vector<int64_t> starts = {row, first}, ends = {row + 1, end}, axes = {0, 2};
  return slice_->RunInPlace(
      {{"x", x}, {"starts", Ints(starts)}, {"ends", Ints(ends)}, {"axes", Ints(axes)}},
      {{"out", out}});
}

absl::StatusOr<FlowBatch> FlowBatch::Create(const onnx::OnnxSession& estimator,
                                            const FlowGlue& glue, int pairs, int bins, int frames) {
  FlowBatch b;
  b.glue_ = &glue;
  b.rows_ = 2 * static_cast<int64_t>(pairs);
  b.bins_ = bins;
  b.frames_ = frames;
  const size_t plane = static_cast<size_t>(b.rows_) * bins * frames * sizeof(float);
  for (auto [buffer, bytes] : {std::pair{&b.x_[0], plane},
                               {&b.x_[1], plane},
                               {&b.v_, plane},
                               {&b.mu_, plane},
                               {&b.cond_, plane},
                               {&b.spks_, static_cast<size_t>(b.rows_) * bins * sizeof(float)},
                               {&b.mask_, static_cast<size_t>(b.rows_) * frames * sizeof(float)}}) {
    auto allocated = estimator.AllocateProvider(bytes);
    if (!allocated.ok()) return allocated.status();
    *buffer = std::move(*allocated);
  }
  // The unconditioned rows' mu, spks and cond are zero; the mask is all ones (one row per
  // call, no padding: flow.py:270).
  for (auto [buffer, value] :
       {std::pair{&b.mu_, 0.0f}, {&b.cond_, 0.0f}, {&b.spks_, 0.0f}, {&b.mask_, 1.0f}}) {
    const auto floats = static_cast<int64_t>(buffer->bytes() / sizeof(float));
    if (absl::Status s = glue.Fill(buffer->View(ElementType::kFloat, {floats}), value); !s.ok()) {
      return s;
    }
  }
  b.t_.assign(static_cast<size_t>(b.rows_), 0.0f);
  return b;
}

TensorView FlowBatch::Plane(const onnx::ProviderBuffer& buffer, int64_t rows) const {
  return buffer.View(ElementType::kFloat, {rows, bins_, frames_});
}

TensorView FlowBatch::State(int which) const { return Plane(x_[which], rows_); }

TensorView FlowBatch::Mu(int pair) const {
  return mu_.View(ElementType::kFloat, {1, bins_, frames_},
                  static_cast<size_t>(2 * pair * bins_ * frames_) * sizeof(float));
}

TensorView FlowBatch::Cond(int pair) const {
  return cond_.View(ElementType::kFloat, {1, bins_, frames_},
                    static_cast<size_t>(2 * pair * bins_ * frames_) * sizeof(float));
}

absl::Status FlowBatch::SetValidFrames(int pair, int valid) {
  if (valid <= 0 || valid > frames_) return core::Internal("flow: valid frames out of the batch");
  if (valid == frames_) return absl::OkStatus();
  for (int64_t row : {2 * static_cast<int64_t>(pair), 2 * static_cast<int64_t>(pair) + 1}) {
    const TensorView tail = mask_.View(ElementType::kFloat, {frames_ - valid},
                                       static_cast<size_t>(row * frames_ + valid) * sizeof(float));
    if (absl::Status s = glue_->Fill(tail, 0.0f); !s.ok()) return s;
  }
  return absl::OkStatus();
}

TensorView FlowBatch::Spks(int pair) const {
  return spks_.View(ElementType::kFloat, {1, bins_},
                    static_cast<size_t>(2 * pair * bins_) * sizeof(float));
}

absl::Status FlowBatch::SetNoise(std::span<const float> noise) {
  if (noise.size() != static_cast<size_t>(bins_ * frames_)) {
    return core::Internal("flow: the noise does not fit the batch");
  }
  // Both rows of every pair start from the same noise (flow_matching.py:103).
  std::vector<float> rows;
  rows.reserve(static_cast<size_t>(rows_) * noise.size());
  for (int64_t r = 0; r < rows_; ++r) rows.insert(rows.end(), noise.begin(), noise.end());
  return glue_->Copy({ElementType::kFloat, rows.data(), {rows_, bins_, frames_}}, X());
}

absl::Status FlowBatch::Step(const onnx::OnnxSession& estimator, const std::string& output, float t,
                             float dt, float w_cond, float w_uncond) {
  std::fill(t_.begin(), t_.end(), t);
  const TensorView x = X();
  absl::Status ran =
      estimator.RunInPlace({{"x", x},
                            {"mask", mask_.View(ElementType::kFloat, {rows_, 1, frames_})},
                            {"mu", Plane(mu_, rows_)},
                            {"t", {ElementType::kFloat, t_.data(), {rows_}}},
                            {"spks", spks_.View(ElementType::kFloat, {rows_, bins_})},
                            {"cond", Plane(cond_, rows_)}},
                           {{output, Plane(v_, rows_)}});
  if (!ran.ok()) return ran;
  const int next = 1 - current_;
  if (absl::Status s = glue_->Euler(x, Plane(v_, rows_), State(next), dt, w_cond, w_uncond);
      !s.ok()) {
    return s;
  }
  current_ = next;
  return absl::OkStatus();
}

}  // namespace voxserve::engine::cosyvoice
