// One loaded ONNX graph behind a Status-returning interface: ORT's C++ API throws Ort::Exception,
// and this is where every such exception is caught and turned into an absl::Status that names the
// model file. Nothing else in voxserve calls ORT directly.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/onnx/onnx_session_config.h"

namespace voxserve::engine::onnx {

enum class ElementType { kFloat, kInt64, kInt32, kOther };
std::string_view ElementTypeName(ElementType type);

// A graph input or output as the model declares it. Dynamic dimensions are -1.
struct TensorSpec {
  std::string name;
  ElementType type = ElementType::kOther;
  std::vector<int64_t> shape;

  bool IsDynamic(size_t dim) const { return dim < shape.size() && shape[dim] < 0; }
};

// A host tensor, owned by value. Data is row-major and its size is the product of `shape`.
struct Tensor {
  std::vector<int64_t> shape;
  std::variant<std::vector<float>, std::vector<int64_t>, std::vector<int32_t>> data;

  static Tensor Floats(std::vector<int64_t> shape, std::vector<float> values);
  static Tensor Int64s(std::vector<int64_t> shape, std::vector<int64_t> values);
  static Tensor Int32s(std::vector<int64_t> shape, std::vector<int32_t> values);
  size_t ElementCount() const;
  // The values as float / int64 whatever the stored type.
  std::vector<float> ToFloats() const;
  std::vector<int64_t> ToInt64s() const;
};

// A caller-owned host buffer lent to one RunInPlace call, not owned: ORT reads an input's bytes
// and writes an output's in place (no copy either way). `data` holds the product of `shape`
// elements of `type`; an input's buffer is never written.
struct TensorView {
  ElementType type = ElementType::kFloat;
  void* data = nullptr;
  std::vector<int64_t> shape;
};

// Owns the Ort::Session. Thread safety: Run() may be called concurrently from any number of
// threads (ORT guarantees InferenceSession::Run is thread-safe; all per-call state lives in the
// call), so one OnnxSession is shared by all scheduler instances of a model.
class OnnxSession {
 public:
  // Loads `model_path`. Errors name the file: missing, unreadable, not an ONNX graph, or an
  // execution provider this ONNX Runtime does not have.
  static absl::StatusOr<std::unique_ptr<OnnxSession>> Create(const std::string& model_path,
                                                             const OnnxSessionConfig& config);
  ~OnnxSession();

  const std::string& path() const { return path_; }
  const std::vector<TensorSpec>& inputs() const { return inputs_; }
  const std::vector<TensorSpec>& outputs() const { return outputs_; }
  const TensorSpec* FindInput(std::string_view name) const;
  // Custom metadata of the graph (ModelProto.metadata_props), e.g. Kokoro's "kokoro_config".
  std::optional<std::string> Metadata(const std::string& key) const;

  // Runs the graph on `inputs` (name, tensor) and returns the outputs named in `output_names`
  // (empty = all, in graph order). Only float, int64 and int32 outputs are supported.
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& inputs,
                                          const std::vector<std::string>& output_names = {}) const;
  // Runs the graph through an Ort::IoBinding over caller buffers: every input is read from its
  // view and every named output is written straight into its view, whose shape must be the one
  // the graph produces (else an error naming the output). For loops that keep large state (a KV
  // cache, the flow's Euler state) in their own buffers and must not copy it per call.
  // Thread-safe like Run.
  absl::Status RunInPlace(const std::vector<std::pair<std::string, TensorView>>& inputs,
                          const std::vector<std::pair<std::string, TensorView>>& outputs) const;

 private:
  struct Impl;
  OnnxSession(std::string path, std::unique_ptr<Impl> impl);

  std::string path_;
  std::unique_ptr<Impl> impl_;
  std::vector<TensorSpec> inputs_;
  std::vector<TensorSpec> outputs_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace voxserve::engine::onnx
