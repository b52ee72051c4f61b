#include "engine/onnx/onnx_session.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>

#include "absl/container/inlined_vector.h"
#include "core/error.h"
#include "engine/onnx/onnx_session_impl.h"
#include "engine/onnx/ort_env.h"

namespace voxserve::engine::onnx {
namespace {

ElementType FromOrt(ONNXTensorElementDataType type) {
  switch (type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT:
      return ElementType::kFloat;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64:
      return ElementType::kInt64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32:
      return ElementType::kInt32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16:
      return ElementType::kFloat16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16:
      return ElementType::kBFloat16;
    default:
      return ElementType::kOther;
  }
}

GraphOptimizationLevel OptimizationLevel(const std::string& name) {
  if (name == "disable") return GraphOptimizationLevel::ORT_DISABLE_ALL;
  if (name == "basic") return GraphOptimizationLevel::ORT_ENABLE_BASIC;
  if (name == "extended") return GraphOptimizationLevel::ORT_ENABLE_EXTENDED;
  return GraphOptimizationLevel::ORT_ENABLE_ALL;
}

// The CUDA execution provider, or why it cannot be used with this ONNX Runtime.
absl::Status AppendCuda(const OnnxSessionConfig& config, Ort::SessionOptions& options) {
  std::vector<std::string> available = Ort::GetAvailableProviders();
  if (std::find(available.begin(), available.end(), "CUDAExecutionProvider") == available.end()) {
    std::string names;
    for (const std::string& name : available) names += (names.empty() ? "" : ", ") + name;
    return absl::FailedPreconditionError(
        "execution_provider cuda: this ONNX Runtime has no CUDA execution provider (it has: " +
        names +
        "); build against the GPU package (scripts/fetch-onnxruntime.sh --gpu, then configure "
        "with -DVOXSERVE_ONNXRUNTIME_GPU=ON) or use execution_provider: cpu");
  }
  std::unordered_map<std::string, std::string> values = {
      {"device_id", std::to_string(config.cuda_device_id)},
      {"cudnn_conv_algo_search", config.cudnn_conv_algo_search == "heuristic"    ? "HEURISTIC"
                                 : config.cudnn_conv_algo_search == "exhaustive" ? "EXHAUSTIVE"
                                                                                 : "DEFAULT"},
      {"use_tf32", config.cuda_tf32 ? "1" : "0"},
  };
  if (config.cuda_memory_limit_bytes > 0) {
    values["gpu_mem_limit"] = std::to_string(config.cuda_memory_limit_bytes);
  }
  if (config.cuda_graph) values["enable_cuda_graph"] = "1";
  if (config.cuda_sdpa_kernel != 0) values["sdpa_kernel"] = std::to_string(config.cuda_sdpa_kernel);
  try {
    Ort::CUDAProviderOptions cuda;
    cuda.Update(values);
    options.AppendExecutionProvider_CUDA_V2(*cuda);
  } catch (const Ort::Exception& e) {
    // The GPU build loads its CUDA provider library here; without CUDA 13 and cuDNN that fails
    // with the missing library's name.
    return absl::FailedPreconditionError(
        std::string("execution_provider cuda: the CUDA execution provider could not start (it "
                    "needs CUDA 13 and cuDNN): ") +
        e.what());
  }
  return absl::OkStatus();
}

std::vector<TensorSpec> Describe(const Ort::Session& session, bool inputs) {
  Ort::AllocatorWithDefaultOptions allocator;
  size_t count = inputs ? session.GetInputCount() : session.GetOutputCount();
  std::vector<TensorSpec> specs;
  for (size_t i = 0; i < count; ++i) {
    TensorSpec spec;
    spec.name = (inputs ? session.GetInputNameAllocated(i, allocator)
                        : session.GetOutputNameAllocated(i, allocator))
                    .get();
    Ort::TypeInfo info = inputs ? session.GetInputTypeInfo(i) : session.GetOutputTypeInfo(i);
    if (info.GetONNXType() == ONNX_TYPE_TENSOR) {
      auto tensor = info.GetTensorTypeAndShapeInfo();
      spec.type = FromOrt(tensor.GetElementType());
      spec.shape = tensor.GetShape();
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

template <typename T>
Ort::Value View(const Ort::MemoryInfo& memory, const std::vector<T>& values,
                const std::vector<int64_t>& shape) {
  // ORT only reads inputs; the const_cast is what its CreateTensor signature needs.
  return Ort::Value::CreateTensor<T>(memory, const_cast<T*>(values.data()), values.size(),
                                     shape.data(), shape.size());
}

absl::StatusOr<Tensor> Copy(const Ort::Value& value, const std::string& name) {
  auto info = value.GetTensorTypeAndShapeInfo();
  Tensor tensor;
  tensor.shape = info.GetShape();
  size_t count = info.GetElementCount();
  switch (info.GetElementType()) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: {
      const float* data = value.GetTensorData<float>();
      tensor.data = std::vector<float>(data, data + count);
      return tensor;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: {
      const int64_t* data = value.GetTensorData<int64_t>();
      tensor.data = std::vector<int64_t>(data, data + count);
      return tensor;
    }
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: {
      const int32_t* data = value.GetTensorData<int32_t>();
      tensor.data = std::vector<int32_t>(data, data + count);
      return tensor;
    }
    default:
      return core::Internal("output '" + name + "' has an element type voxserve does not read");
  }
}

// What a Run is given: with cpu_memory_arena shrink, a Run that is to give its memory back has
// the arenas shrunk at its end ("device:id" pairs; the CUDA arena too when that provider is in
// use); every other Run gets the default options.
Ort::RunOptions ShrinkingRunOptions(const OnnxSessionConfig& config) {
  Ort::RunOptions options;
  std::string arenas = "cpu:0";
  if (config.execution_provider == "cuda")
    arenas += ";gpu:" + std::to_string(config.cuda_device_id);
  options.AddConfigEntry("memory.enable_memory_arena_shrinkage", arenas.c_str());
  return options;
}

}  // namespace

absl::Status BuildSessionOptions(const OnnxSessionConfig& config, Ort::SessionOptions& options) {
  options.SetIntraOpNumThreads(config.intra_op_threads);
  options.SetInterOpNumThreads(config.inter_op_threads);
  options.SetGraphOptimizationLevel(OptimizationLevel(config.graph_optimization));
  if (!config.optimized_model_path.empty()) {
    options.SetOptimizedModelFilePath(config.optimized_model_path.c_str());
  }
  const char* spin = config.allow_spinning ? "1" : "0";
  options.AddConfigEntry("session.intra_op.allow_spinning", spin);
  options.AddConfigEntry("session.inter_op.allow_spinning", spin);
  if (config.cpu_memory_arena == "off") options.DisableCpuMemArena();
  if (config.execution_provider == "cuda") return AppendCuda(config, options);
  return absl::OkStatus();
}

OnnxSession::Impl::Impl(Ort::Session s, const OnnxSessionConfig& config)
    : session(std::move(s)),
      shrink(ShrinkingRunOptions(config)),
      // off: no arena to shrink; on: never shrink.
      shrink_above(config.cpu_memory_arena == "shrink"
                       ? static_cast<size_t>(config.arena_keep_elements)
                       : std::numeric_limits<size_t>::max()),
      host_memory(Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault)),
      provider_memory(ProviderMemory(session, config)),
      provider_is_host(provider_memory.GetDeviceType() == OrtMemoryInfoDeviceType_CPU) {}

std::string_view ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kFloat:
      return "float32";
    case ElementType::kInt64:
      return "int64";
    case ElementType::kInt32:
      return "int32";
    case ElementType::kFloat16:
      return "float16";
    case ElementType::kBFloat16:
      return "bfloat16";
    case ElementType::kOther:
      break;
  }
  return "other";
}

size_t ElementBytes(ElementType type) {
  switch (type) {
    case ElementType::kInt64:
      return 8;
    case ElementType::kFloat:
    case ElementType::kInt32:
      return 4;
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
      return 2;
    case ElementType::kOther:
      break;
  }
  return 0;
}

size_t TensorView::ElementCount() const {
  size_t count = 1;
  for (int64_t d : shape) count *= d > 0 ? static_cast<size_t>(d) : 0;
  return count;
}

size_t TensorView::Bytes() const { return ElementCount() * ElementBytes(type); }

Tensor Tensor::Floats(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor{std::move(shape), std::move(values)};
}
Tensor Tensor::Int64s(std::vector<int64_t> shape, std::vector<int64_t> values) {
  return Tensor{std::move(shape), std::move(values)};
}
Tensor Tensor::Int32s(std::vector<int64_t> shape, std::vector<int32_t> values) {
  return Tensor{std::move(shape), std::move(values)};
}

size_t Tensor::ElementCount() const {
  return std::visit([](const auto& v) { return v.size(); }, data);
}

std::vector<float> Tensor::ToFloats() const {
  return std::visit([](const auto& v) { return std::vector<float>(v.begin(), v.end()); }, data);
}

std::vector<int64_t> Tensor::ToInt64s() const {
  return std::visit(
      [](const auto& v) {
        std::vector<int64_t> out;
        out.reserve(v.size());
        for (auto x : v) out.push_back(static_cast<int64_t>(x));
        return out;
      },
      data);
}

OnnxSession::OnnxSession(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}

OnnxSession::~OnnxSession() = default;

absl::StatusOr<std::unique_ptr<OnnxSession>> OnnxSession::Create(const std::string& model_path,
                                                                 const OnnxSessionConfig& config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  std::error_code error;
  if (!std::filesystem::is_regular_file(model_path, error)) {
    return absl::NotFoundError("model file " + model_path + " does not exist");
  }
  try {
    // The environment first: appending the CUDA provider loads its library, which logs through
    // the environment's logger (without one ORT throws "Attempt to use DefaultLogger but none
    // has been registered" in place of the loader's own error, as the GPU build showed here).
    Ort::Env& env = OrtEnvironment();
    Ort::SessionOptions options;
    if (absl::Status status = BuildSessionOptions(config, options); !status.ok()) {
      return absl::Status(status.code(),
                          "model file " + model_path + ": " + std::string(status.message()));
    }
    Ort::Session session(env, model_path.c_str(), options);
    std::unique_ptr<OnnxSession> loaded =
        Wrap(model_path, std::make_unique<Impl>(std::move(session), config));
    return loaded;
  } catch (const Ort::Exception& e) {
    return absl::InvalidArgumentError("cannot load model " + model_path + ": " + e.what());
  } catch (const std::exception& e) {
    return core::Internal("cannot load model " + model_path + ": " + e.what());
  }
}

std::unique_ptr<OnnxSession> OnnxSession::Wrap(std::string path, std::unique_ptr<Impl> impl) {
  std::unique_ptr<OnnxSession> loaded(new OnnxSession(std::move(path), std::move(impl)));
  loaded->inputs_ = Describe(loaded->impl_->session, true);
  loaded->outputs_ = Describe(loaded->impl_->session, false);
  Ort::AllocatorWithDefaultOptions allocator;
  Ort::ModelMetadata metadata = loaded->impl_->session.GetModelMetadata();
  for (const auto& key : metadata.GetCustomMetadataMapKeysAllocated(allocator)) {
    auto value = metadata.LookupCustomMetadataMapAllocated(key.get(), allocator);
    loaded->metadata_[key.get()] = value ? value.get() : "";
  }
  return loaded;
}

const TensorSpec* OnnxSession::FindInput(std::string_view name) const {
  for (const TensorSpec& spec : inputs_) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::optional<std::string> OnnxSession::Metadata(const std::string& key) const {
  auto it = metadata_.find(key);
  if (it == metadata_.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::vector<Tensor>> OnnxSession::Run(
    const std::vector<std::pair<std::string, Tensor>>& inputs,
    const std::vector<std::string>& output_names) const {
  try {
    Ort::MemoryInfo memory = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    std::vector<const char*> in_names;
    std::vector<Ort::Value> in_values;
    size_t input_elements = 0;
    for (const auto& input : inputs) {
      const std::string& name = input.first;
      const Tensor& tensor = input.second;  // not a structured binding: clang 14 cannot capture one
      input_elements += tensor.ElementCount();
      in_names.push_back(name.c_str());
      in_values.push_back(std::visit(
          [&](const auto& values) { return View(memory, values, tensor.shape); }, tensor.data));
    }
    std::vector<const char*> out_names;
    if (output_names.empty()) {
      for (const TensorSpec& spec : outputs_) out_names.push_back(spec.name.c_str());
    } else {
      for (const std::string& name : output_names) out_names.push_back(name.c_str());
    }
    std::vector<Ort::Value> values =
        impl_->session.Run(impl_->OptionsFor(input_elements), in_names.data(), in_values.data(),
                           in_values.size(), out_names.data(), out_names.size());
    std::vector<Tensor> outputs;
    for (size_t i = 0; i < values.size(); ++i) {
      auto copied = Copy(values[i], out_names[i]);
      if (!copied.ok()) {
        return core::Internal("model file " + path_ + ": " +
                              std::string(copied.status().message()));
      }
      outputs.push_back(std::move(*copied));
    }
    return outputs;
  } catch (const Ort::Exception& e) {
    return core::Internal("model file " + path_ + ": inference failed: " + e.what());
  } catch (const std::exception& e) {
    return core::Internal("model file " + path_ + ": inference failed: " + e.what());
  }
}

namespace {

absl::StatusOr<Ort::Value> ViewOf(const Ort::MemoryInfo& memory, const TensorView& view,
                                  const std::string& name) {
  size_t count = 1;
  for (int64_t d : view.shape) {
    if (d < 0) return absl::InvalidArgumentError("tensor '" + name + "' has a negative dimension");
    count *= static_cast<size_t>(d);
  }
  if (view.data == nullptr && count > 0) {
    // ProviderBuffer::View's answer for a view past the buffer's end.
    return absl::InvalidArgumentError("tensor '" + name + "' has no buffer behind it (a view " +
                                      "past the end of its provider buffer)");
  }
  switch (view.type) {
    case ElementType::kFloat:
      return Ort::Value::CreateTensor<float>(memory, static_cast<float*>(view.data), count,
                                             view.shape.data(), view.shape.size());
    case ElementType::kInt64:
      return Ort::Value::CreateTensor<int64_t>(memory, static_cast<int64_t*>(view.data), count,
                                               view.shape.data(), view.shape.size());
    case ElementType::kInt32:
      return Ort::Value::CreateTensor<int32_t>(memory, static_cast<int32_t*>(view.data), count,
                                               view.shape.data(), view.shape.size());
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
      return Ort::Value::CreateTensor(
          memory, view.data, view.Bytes(), view.shape.data(), view.shape.size(),
          view.type == ElementType::kFloat16 ? ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16
                                             : ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16);
    case ElementType::kOther:
      break;
  }
  return absl::InvalidArgumentError("tensor '" + name + "' has an unsupported element type");
}

}  // namespace

absl::Status OnnxSession::RunInPlace(const std::vector<std::pair<std::string, TensorView>>& inputs,
                                     const std::vector<std::pair<std::string, TensorView>>& outputs,
                                     HostTraffic* traffic, int cuda_graph_id) const {
  try {
    Ort::IoBinding binding(impl_->session);
    std::vector<Ort::Value> values;  // must outlive the Run: they view the caller's buffers
    values.reserve(inputs.size() + outputs.size());
    HostTraffic moved;
    for (bool output : {false, true}) {
      for (const auto& [name, view] : output ? outputs : inputs) {
        const bool host = view.place == MemoryPlace::kHost;
        auto value = ViewOf(host ? impl_->host_memory : impl_->provider_memory, view, name);
        if (!value.ok()) {
          return core::Internal("model file " + path_ + ": " +
                                std::string(value.status().message()));
        }
        values.push_back(std::move(*value));
        if (output) {
          binding.BindOutput(name.c_str(), values.back());
        } else {
          binding.BindInput(name.c_str(), values.back());
        }
        if (host) (output ? moved.from_provider : moved.to_provider) += view.Bytes();
      }
    }
    // Loops over caller buffers (decode steps, Euler steps) repeat the same shapes: the arena's
    // blocks are what they reuse, and the caller bounds the sizes, so they are never shrunk.
    if (cuda_graph_id == 0) {
      impl_->session.Run(impl_->keep, binding);
    } else {
      // Per call: the id is the run's (ORT reads run options only during the call).
      Ort::RunOptions options;
      options.AddConfigEntry("gpu_graph_id", std::to_string(cuda_graph_id).c_str());
      impl_->session.Run(options, binding);
    }
    if (traffic != nullptr) *traffic += moved;
    return absl::OkStatus();
  } catch (const Ort::Exception& e) {
    return core::Internal("model file " + path_ + ": inference failed: " + e.what());
  } catch (const std::exception& e) {
    return core::Internal("model file " + path_ + ": inference failed: " + e.what());
  }
}

}  // namespace voxserve::engine::onnx
