// OnnxSession::CreateFromGraph: small graphs built in memory with ORT's Model Editor API
// (onnxruntime_cxx_api.h: Ort::Graph, Ort::Node, Ort::Model), run like any loaded model.
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/onnx/onnx_session_impl.h"
#include "engine/onnx/ort_env.h"

namespace voxserve::engine::onnx {
namespace {

ONNXTensorElementDataType ToOrt(ElementType type) {
  switch (type) {
    case ElementType::kFloat:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    case ElementType::kInt64:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
    case ElementType::kInt32:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32;
    case ElementType::kFloat16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    case ElementType::kBFloat16:
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16;
    case ElementType::kOther:
      break;
  }
  return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
}

std::vector<Ort::ValueInfo> ValueInfos(const std::vector<GraphSpec::Value>& values) {
  std::vector<Ort::ValueInfo> infos;
  for (const GraphSpec::Value& v : values) {
    std::vector<int64_t> dims(v.rank, -1);
    std::vector<std::string> names;
    for (size_t i = 0; i < v.rank; ++i) names.push_back(v.name + "_" + std::to_string(i));
    Ort::TensorTypeAndShapeInfo tensor(ToOrt(v.type), dims, &names);
    Ort::TypeInfo type = Ort::TypeInfo::CreateTensorInfo(tensor.GetConst());
    infos.emplace_back(v.name, type.GetConst());
  }
  return infos;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OnnxSession>> OnnxSession::CreateFromGraph(
    const GraphSpec& spec, const OnnxSessionConfig& given) {
  if (absl::Status status = given.Validate(); !status.ok()) return status;
  OnnxSessionConfig config = given;
  config.optimized_model_path.clear();  // that path names the model's own optimized file
  const std::string name = "(in-memory graph " + spec.name + ")";
  try {
    Ort::Env& env = OrtEnvironment();  // before the provider (see Create)
    Ort::SessionOptions options;
    if (absl::Status status = BuildSessionOptions(config, options); !status.ok()) {
      return absl::Status(status.code(), name + ": " + std::string(status.message()));
    }
    Ort::Graph graph;
    std::vector<Ort::ValueInfo> inputs = ValueInfos(spec.inputs);
    std::vector<Ort::ValueInfo> outputs = ValueInfos(spec.outputs);
    graph.SetInputs(inputs);
    graph.SetOutputs(outputs);
    for (size_t i = 0; i < spec.nodes.size(); ++i) {
      const GraphSpec::Node& n = spec.nodes[i];
      std::vector<Ort::OpAttr> attributes;
      for (const auto& [key, value] : n.int_attributes) {
        attributes.emplace_back(key.c_str(), &value, 1, ORT_OP_ATTR_INT);
      }
      Ort::Node node(n.op, "", n.op + "_" + std::to_string(i), n.inputs, n.outputs, attributes);
      graph.AddNode(node);
    }
    Ort::Model model({{"", spec.opset}});
    model.AddGraph(graph);
    Ort::Session session(env, model, options);
    return Wrap(name, std::make_unique<Impl>(std::move(session), config));
  } catch (const Ort::Exception& e) {
    return absl::InvalidArgumentError("cannot build " + name + ": " + e.what());
  } catch (const std::exception& e) {
    return core::Internal("cannot build " + name + ": " + e.what());
  }
}

}  // namespace voxserve::engine::onnx
