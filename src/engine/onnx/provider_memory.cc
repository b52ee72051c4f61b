// Provider memory: where a session's execution provider computes, and buffers there allocated
// through the session's own ORT allocator (docs/cosyvoice-generation.md, "On a GPU").
#include <cstdint>
#include <string>

#include "core/error.h"
#include "engine/onnx/onnx_session_impl.h"

namespace voxserve::engine::onnx {

Ort::MemoryInfo ProviderMemory(const Ort::Session& session, const OnnxSessionConfig& config) {
  // ORT's own answer first: the memory its inputs (or outputs) are consumed in. A graph whose
  // every input feeds host-side nodes says host even on CUDA; its outputs may still say device.
  for (bool inputs : {true, false}) {
    for (const Ort::ConstMemoryInfo& info :
         inputs ? session.GetMemoryInfoForInputs() : session.GetMemoryInfoForOutputs()) {
      if (info == nullptr || info.GetDeviceType() == OrtMemoryInfoDeviceType_CPU) continue;
      return Ort::MemoryInfo(info.GetAllocatorName().c_str(), info.GetAllocatorType(),
                             info.GetDeviceId(), info.GetMemoryType());
    }
  }
  if (config.execution_provider == "cuda") {
    // "Cuda" is the CUDA provider's device memory (ORT's onnxruntime_c_api.h names).
    return Ort::MemoryInfo("Cuda", OrtDeviceAllocator, config.cuda_device_id, OrtMemTypeDefault);
  }
  return Ort::MemoryInfo::CreateCpu(OrtDeviceAllocator, OrtMemTypeDefault);
}

struct ProviderBuffer::Impl {
  Impl(Ort::Allocator a, void* d, size_t n) : allocator(std::move(a)), data(d), bytes(n) {}
  ~Impl() { allocator.Free(data); }
  Ort::Allocator allocator;  // the owning session's, for its provider memory
  void* data;
  size_t bytes;
};

ProviderBuffer::ProviderBuffer() = default;
ProviderBuffer::~ProviderBuffer() = default;
ProviderBuffer::ProviderBuffer(ProviderBuffer&&) noexcept = default;
ProviderBuffer& ProviderBuffer::operator=(ProviderBuffer&&) noexcept = default;
ProviderBuffer::ProviderBuffer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

size_t ProviderBuffer::bytes() const { return impl_ ? impl_->bytes : 0; }

TensorView ProviderBuffer::View(ElementType type, std::vector<int64_t> shape, size_t offset) const {
  TensorView view{type, nullptr, std::move(shape), MemoryPlace::kProvider};
  // Offsets are arithmetic on the device address; the host never reads through it.
  if (impl_ && offset + view.Bytes() <= impl_->bytes) {
    view.data = static_cast<uint8_t*>(impl_->data) + offset;
  }
  return view;
}

absl::StatusOr<ProviderBuffer> OnnxSession::AllocateProvider(size_t bytes) const {
  try {
    Ort::Allocator allocator(impl_->session, impl_->provider_memory);
    void* data = allocator.Alloc(bytes == 0 ? 1 : bytes);  // a valid address even when empty
    if (data == nullptr) {
      return absl::ResourceExhaustedError("model file " + path_ + ": no " + std::to_string(bytes) +
                                          " bytes of provider memory");
    }
    return ProviderBuffer(
        std::make_unique<ProviderBuffer::Impl>(std::move(allocator), data, bytes));
  } catch (const Ort::Exception& e) {
    return absl::ResourceExhaustedError("model file " + path_ + ": cannot allocate " +
                                        std::to_string(bytes) +
                                        " bytes of provider memory: " + e.what());
  }
}

bool OnnxSession::provider_memory_is_host() const { return impl_->provider_is_host; }

}  // namespace voxserve::engine::onnx
