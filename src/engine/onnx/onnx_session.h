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

// kFloat16 / kBFloat16: buffers the host never reads (a half-precision KV cache); only views
// of them are bound.
enum class ElementType { kFloat, kInt64, kInt32, kFloat16, kBFloat16, kOther };
size_t ElementBytes(ElementType type);  // 0 for kOther
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

// Where a TensorView's bytes are. kHost: memory the host reads and writes. kProvider: the memory
// the session's execution provider computes in (a ProviderBuffer): CUDA device memory with the
// CUDA provider, host memory with the CPU provider. Code never dereferences a provider view (on
// CUDA it could not), so what runs on the CPU provider is the code that runs on CUDA; only the
// memory behind the views differs.
enum class MemoryPlace { kHost, kProvider };

// A caller-owned buffer lent to one RunInPlace call, not owned: ORT reads an input's bytes and
// writes an output's in place. `data` holds the product of `shape` elements of `type`; an input's
// buffer is never written. A host view bound to a session whose provider memory is the device's
// is copied by ORT (to the device before the run, back after it): RunInPlace counts those bytes.
struct TensorView {
  ElementType type = ElementType::kFloat;
  void* data = nullptr;
  std::vector<int64_t> shape;
  MemoryPlace place = MemoryPlace::kHost;

  size_t ElementCount() const;
  size_t Bytes() const;
};

// Bytes one or more RunInPlace calls bound from host views: inputs (host to the provider's
// memory) and outputs (back). With the CUDA provider ORT copies exactly these over PCIe; with the
// CPU provider it reads and writes them where they are. Provider views never count: they stay.
struct HostTraffic {
  int64_t to_provider = 0;
  int64_t from_provider = 0;
  HostTraffic& operator+=(const HostTraffic& other) {
    to_provider += other.to_provider;
    from_provider += other.from_provider;
    return *this;
  }
};

// Memory in the provider's memory, allocated once through the owning session's ORT allocator for
// it (an Ort::Allocator over the session and its provider MemoryInfo) and freed on destruction.
// Owned by value, move-only. It must not outlive the OnnxSession that allocated it (declare it
// after the session). Every session of the same provider and device reads and writes it in place.
class ProviderBuffer {
 public:
  ProviderBuffer();
  ~ProviderBuffer();
  ProviderBuffer(ProviderBuffer&&) noexcept;
  ProviderBuffer& operator=(ProviderBuffer&&) noexcept;

  size_t bytes() const;
  bool empty() const { return bytes() == 0; }
  // A provider view of `shape` elements of `type`, `offset` bytes into the buffer. A view that
  // would reach past the end has no data, and RunInPlace refuses it naming the tensor.
  TensorView View(ElementType type, std::vector<int64_t> shape, size_t offset = 0) const;

 private:
  friend class OnnxSession;
  struct Impl;
  explicit ProviderBuffer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A small graph built in memory with ORT's Model Editor API, for the glue between the models'
// runs that has to happen where the provider's memory is (writing a decode step's keys into the
// KV cache, the flow's Euler update, filling and slicing buffers): on CUDA it then runs on the
// device and nothing goes through the host. Every dimension is dynamic. Plain data.
struct GraphSpec {
  struct Value {
    std::string name;
    ElementType type = ElementType::kFloat;
    size_t rank = 1;
  };
  struct Node {
    std::string op;  // an ai.onnx operator
    std::vector<std::string> inputs, outputs;
    std::vector<std::pair<std::string, int64_t>> int_attributes;
  };
  std::string name;  // stands for the model file in errors
  std::vector<Value> inputs, outputs;
  std::vector<Node> nodes;
  int opset = 17;
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
  // A session over a graph built in memory (GraphSpec), with the same options and provider.
  // InvalidArgument naming the graph when ORT refuses it.
  static absl::StatusOr<std::unique_ptr<OnnxSession>> CreateFromGraph(
      const GraphSpec& spec, const OnnxSessionConfig& config);
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
  // cache, the flow's Euler state) in their own buffers and must not copy it per call. Host
  // views' bytes are added to `traffic` when given. An output may be bound to the memory of an
  // input (a ScatterND's data): ORT's ScatterND then writes only the updates (it copies data to
  // output only when the two differ), which is how the KV cache takes new keys in place.
  // Thread-safe like Run.
  //
  // `cuda_graph_id` (sessions created with OnnxSessionConfig::cuda_graph): > 0 runs under ORT's
  // CUDA graph of that id (ORT's run option gpu_graph_id): its first runs execute and capture
  // it, later ones replay it, which ignores the views given and reuses the addresses bound at
  // capture, so every view must be provider memory at a fixed address (host views for the
  // graph's CPU-side inputs, whose values are those of the capture); -1 runs without a graph.
  // 0: the session's default (no graph unless the session captures one by itself).
  absl::Status RunInPlace(const std::vector<std::pair<std::string, TensorView>>& inputs,
                          const std::vector<std::pair<std::string, TensorView>>& outputs,
                          HostTraffic* traffic = nullptr, int cuda_graph_id = 0) const;

  // `bytes` of the provider's memory through this session's allocator (see ProviderBuffer).
  // Not initialized: write it (a run's output, FillGraph) before reading it.
  absl::StatusOr<ProviderBuffer> AllocateProvider(size_t bytes) const;
  // Whether the provider computes in host memory (the CPU provider): provider views are then
  // host memory too, and ORT copies nothing for host views.
  bool provider_memory_is_host() const;

 private:
  struct Impl;  // onnx_session_impl.h
  OnnxSession(std::string path, std::unique_ptr<Impl> impl);
  // The loaded session with its inputs, outputs and metadata read.
  static std::unique_ptr<OnnxSession> Wrap(std::string path, std::unique_ptr<Impl> impl);

  std::string path_;
  std::unique_ptr<Impl> impl_;
  std::vector<TensorSpec> inputs_;
  std::vector<TensorSpec> outputs_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace voxserve::engine::onnx
