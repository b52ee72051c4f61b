#include "engine/onnx/piper_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"

namespace voxserve::engine::onnx {
namespace {

absl::Status ExpectInput(const OnnxSession& session, const char* name, ElementType type,
                         size_t rank) {
  const TensorSpec* spec = session.FindInput(name);
  if (spec == nullptr) {
    return core::InvalidArgument("model file " + session.path() +
                                 " is not a Piper voice: it has no '" + name + "' input");
  }
  if (spec->type != type || spec->shape.size() != rank) {
    return core::InvalidArgument("model file " + session.path() + ": input '" + name +
                                 "' must be " + std::string(ElementTypeName(type)) + " of rank " +
                                 std::to_string(rank));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<PiperModel>> PiperModel::Create(const std::string& model_path,
                                                               const OnnxSessionConfig& config) {
  auto session = OnnxSession::Create(model_path, config);
  if (!session.ok()) return session.status();
  std::unique_ptr<PiperModel> model(new PiperModel(std::move(*session)));
  const OnnxSession& s = *model->session_;
  if (auto st = ExpectInput(s, "input", ElementType::kInt64, 2); !st.ok()) return st;
  if (auto st = ExpectInput(s, "input_lengths", ElementType::kInt64, 1); !st.ok()) return st;
  if (auto st = ExpectInput(s, "scales", ElementType::kFloat, 1); !st.ok()) return st;
  model->has_sid_ = s.FindInput("sid") != nullptr;
  if (model->has_sid_) {
    if (auto st = ExpectInput(s, "sid", ElementType::kInt64, 1); !st.ok()) return st;
  }
  if (s.outputs().empty() || s.outputs()[0].type != ElementType::kFloat) {
    return core::InvalidArgument("model file " + model_path +
                                 ": the first output must be float32 audio");
  }
  model->audio_output_ = s.outputs()[0].name;
  if (s.outputs().size() > 1) model->durations_output_ = s.outputs()[1].name;
  model->dynamic_batch_ = s.FindInput("input")->IsDynamic(0);
  return model;
}

absl::StatusOr<std::vector<std::vector<float>>> PiperModel::Infer(
    std::span<const std::vector<int64_t>> batch, const PiperScales& scales,
    std::optional<int64_t> speaker_id, int hop_length,
    std::vector<std::vector<float>>* frames_out) const {
  if (frames_out != nullptr) frames_out->clear();
  if (batch.empty()) return std::vector<std::vector<float>>{};
  if (batch.size() > 1 && !can_batch()) {
    return core::Internal("model file " + session_->path() + " cannot run batches");
  }
  const auto items = static_cast<int64_t>(batch.size());
  size_t longest = 0;
  for (const auto& ids : batch) longest = std::max(longest, ids.size());
  // Padding with id 0 (PAD) beyond each item's length; input_lengths masks it out.
  std::vector<int64_t> ids(batch.size() * longest, 0);
  std::vector<int64_t> lengths;
  for (size_t i = 0; i < batch.size(); ++i) {
    std::copy(batch[i].begin(), batch[i].end(), ids.begin() + static_cast<long>(i * longest));
    lengths.push_back(static_cast<int64_t>(batch[i].size()));
  }
  std::vector<std::pair<std::string, Tensor>> inputs;
  inputs.emplace_back("input", Tensor::Int64s({items, static_cast<int64_t>(longest)}, ids));
  inputs.emplace_back("input_lengths", Tensor::Int64s({items}, lengths));
  inputs.emplace_back("scales", Tensor::Floats({3}, {scales.noise, scales.length, scales.noise_w}));
  if (has_sid_) inputs.emplace_back("sid", Tensor::Int64s({1}, {speaker_id.value_or(0)}));

  std::vector<std::string> wanted = {audio_output_};
  if (durations_output_) wanted.push_back(*durations_output_);
  auto outputs = session_->Run(inputs, wanted);
  if (!outputs.ok()) return outputs.status();

  const Tensor& audio = (*outputs)[0];
  const auto& samples = std::get<std::vector<float>>(audio.data);
  const int64_t per_item = audio.shape.empty() ? 0 : audio.shape.back();
  if (per_item < 0 || static_cast<size_t>(per_item) * batch.size() != samples.size()) {
    return core::Internal("model file " + session_->path() + ": output of " +
                          std::to_string(samples.size()) + " values does not hold " +
                          std::to_string(batch.size()) + " item(s)");
  }
  std::vector<float> frames;
  size_t frames_per_item = 0;
  if (durations_output_) {
    frames = (*outputs)[1].ToFloats();
    frames_per_item = frames.size() / batch.size();
  }
  std::vector<std::vector<float>> result;
  for (size_t i = 0; i < batch.size(); ++i) {
    size_t count = static_cast<size_t>(per_item);
    if (durations_output_ && frames_per_item >= batch[i].size()) {
      auto first = frames.begin() + static_cast<long>(i * frames_per_item);
      double total = std::accumulate(first, first + static_cast<long>(batch[i].size()), 0.0);
      count = std::min(count,
                       static_cast<size_t>(std::llround(total)) * static_cast<size_t>(hop_length));
      if (frames_out != nullptr) {
        frames_out->resize(i);  // items before without durations get empty entries
        frames_out->emplace_back(first, first + static_cast<long>(batch[i].size()));
      }
    }
    auto begin = samples.begin() + static_cast<long>(i * static_cast<size_t>(per_item));
    result.emplace_back(begin, begin + static_cast<long>(count));
  }
  return result;
}

}  // namespace voxserve::engine::onnx
