#include "engine/onnx/kokoro_model.h"

#include <cmath>

#include "core/error.h"
#include "engine/onnx/kokoro_voices.h"

namespace voxserve::engine::onnx {
namespace {

const TensorSpec* FirstOf(const OnnxSession& session, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (const TensorSpec* spec = session.FindInput(name)) return spec;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<KokoroModel>> KokoroModel::Create(const std::string& model_path,
                                                                 const OnnxSessionConfig& config) {
  auto session = OnnxSession::Create(model_path, config);
  if (!session.ok()) return session.status();
  std::unique_ptr<KokoroModel> model(new KokoroModel(std::move(*session)));
  const OnnxSession& s = *model->session_;
  auto not_kokoro = [&](const std::string& why) {
    return core::InvalidArgument("model file " + model_path + " is not a Kokoro graph: " + why);
  };
  const TensorSpec* ids = FirstOf(s, {"input_ids", "tokens"});
  if (ids == nullptr || ids->type != ElementType::kInt64) {
    return not_kokoro("no int64 'input_ids' or 'tokens' input");
  }
  const TensorSpec* style = FirstOf(s, {"style", "ref_s"});
  if (style == nullptr || style->type != ElementType::kFloat) {
    return not_kokoro("no float32 'style' input");
  }
  if (!style->shape.empty() && style->shape.back() > 0 &&
      style->shape.back() != static_cast<int64_t>(kKokoroStyleDim)) {
    return not_kokoro("its style input is not 256 wide");
  }
  const TensorSpec* speed = FirstOf(s, {"speed"});
  if (speed == nullptr ||
      (speed->type != ElementType::kFloat && speed->type != ElementType::kInt32)) {
    return not_kokoro("no float32 or int32 'speed' input");
  }
  if (s.outputs().empty() || s.outputs()[0].type != ElementType::kFloat) {
    return not_kokoro("its first output is not float32 audio");
  }
  model->ids_input_ = ids->name;
  model->style_input_ = style->name;
  model->speed_input_ = speed->name;
  model->speed_type_ = speed->type;
  model->audio_output_ = s.outputs()[0].name;
  for (const TensorSpec& output : s.outputs()) {
    if (output.name == "duration") model->duration_output_ = output.name;
  }
  return model;
}

absl::StatusOr<std::vector<float>> KokoroModel::Infer(std::span<const int64_t> tokens,
                                                      std::span<const float> style, double speed,
                                                      std::vector<float>* frames) const {
  if (frames != nullptr) frames->clear();
  std::vector<int64_t> ids = {0};  // the boundary pad at both ends
  ids.insert(ids.end(), tokens.begin(), tokens.end());
  ids.push_back(0);
  std::vector<std::pair<std::string, Tensor>> inputs;
  inputs.emplace_back(ids_input_, Tensor::Int64s({1, static_cast<int64_t>(ids.size())}, ids));
  inputs.emplace_back(style_input_, Tensor::Floats({1, static_cast<int64_t>(style.size())},
                                                   std::vector<float>(style.begin(), style.end())));
  if (speed_type_ == ElementType::kInt32) {
    // An int32 speed cannot carry 0.8 or 1.5 (kokoro-onnx issue #155): nearest whole speed, ≥ 1.
    inputs.emplace_back(speed_input_,
                        Tensor::Int32s({1}, {std::max(1, static_cast<int>(std::lround(speed)))}));
  } else {
    inputs.emplace_back(speed_input_, Tensor::Floats({1}, {static_cast<float>(speed)}));
  }
  std::vector<std::string> wanted = {audio_output_};
  if (frames != nullptr && duration_output_) wanted.push_back(*duration_output_);
  auto outputs = session_->Run(inputs, wanted);
  if (!outputs.ok()) return outputs.status();
  if (wanted.size() > 1) {
    // Frames per input position: hexgrad's export gives one per id, pads included; some graphs
    // leave the pads out. Either way `frames` gets one per token.
    std::vector<float> all = (*outputs)[1].ToFloats();
    if (all.size() == tokens.size() + 2) {
      frames->assign(all.begin() + 1, all.end() - 1);
    } else if (all.size() == tokens.size()) {
      *frames = std::move(all);
    }
  }
  // The waveform may be [N], [1, N] or [1, 1, N]; every element is a sample (as sherpa-onnx reads
  // it).
  return std::move(std::get<std::vector<float>>((*outputs)[0].data));
}

}  // namespace voxserve::engine::onnx
