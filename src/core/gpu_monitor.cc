#include "core/gpu_monitor.h"

#include <dlfcn.h>

namespace voxserve::core {
namespace {

// The few NVML declarations used, from nvml.h (stable C ABI since NVML 2.x; the _v2 entry points
// exist in every driver since 2012). Declared here so no CUDA headers are needed to build.
using NvmlReturn = int;  // NVML_SUCCESS = 0
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlUtilization {
  unsigned gpu;
  unsigned memory;
};
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr unsigned kNameLength = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

}  // namespace

struct GpuMonitor::Api {
  NvmlReturn (*init)();
  NvmlReturn (*shutdown)();
  NvmlReturn (*count)(unsigned*);
  NvmlReturn (*handle)(unsigned, NvmlDevice*);
  NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*);
  NvmlReturn (*memory)(NvmlDevice, NvmlMemory*);
  NvmlReturn (*name)(NvmlDevice, char*, unsigned);
};

namespace {

template <typename Function>
bool Resolve(void* library, const char* symbol, Function* out) {
  *out = reinterpret_cast<Function>(dlsym(library, symbol));
  return *out != nullptr;
}

}  // namespace

std::unique_ptr<GpuMonitor> GpuMonitor::Open(const std::string& library_name) {
  void* library = dlopen(library_name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return nullptr;
  auto api = std::make_unique<Api>();
  bool resolved = Resolve(library, "nvmlInit_v2", &api->init) &&
                  Resolve(library, "nvmlShutdown", &api->shutdown) &&
                  Resolve(library, "nvmlDeviceGetCount_v2", &api->count) &&
                  Resolve(library, "nvmlDeviceGetHandleByIndex_v2", &api->handle) &&
                  Resolve(library, "nvmlDeviceGetUtilizationRates", &api->utilization) &&
                  Resolve(library, "nvmlDeviceGetMemoryInfo", &api->memory) &&
                  Resolve(library, "nvmlDeviceGetName", &api->name);
  if (!resolved || api->init() != 0) {
    dlclose(library);
    return nullptr;
  }
  unsigned count = 0;
  if (api->count(&count) != 0 || count == 0) {
    api->shutdown();
    dlclose(library);
    return nullptr;
  }
  return std::unique_ptr<GpuMonitor>(new GpuMonitor(library, std::move(api), count));
}

GpuMonitor::GpuMonitor(void* library, std::unique_ptr<Api> api, unsigned count)
    : library_(library), api_(std::move(api)), count_(count) {}

GpuMonitor::~GpuMonitor() {
  api_->shutdown();
  dlclose(library_);
}

std::vector<GpuStatus> GpuMonitor::Read() const {
  std::vector<GpuStatus> gpus;
  for (unsigned i = 0; i < count_; ++i) {
    NvmlDevice device = nullptr;
    NvmlUtilization utilization{};
    NvmlMemory memory{};
    if (api_->handle(i, &device) != 0 || api_->utilization(device, &utilization) != 0 ||
        api_->memory(device, &memory) != 0) {
      continue;
    }
    GpuStatus status;
    status.index = static_cast<int>(i);
    char name[kNameLength] = {};
    if (api_->name(device, name, kNameLength) == 0) status.name = name;
    status.utilization_percent = utilization.gpu;
    status.memory_utilization_percent = utilization.memory;
    status.memory_used_bytes = memory.used;
    status.memory_total_bytes = memory.total;
    gpus.push_back(std::move(status));
  }
  return gpus;
}

void GpuMonitor::AddMetrics(MetricsRegistry& registry) const {
  auto& utilization = registry.AddGauge("voxserve_gpu_utilization_ratio",
                                        "Share of time a kernel ran on the GPU (0..1).", {"gpu"});
  auto& used = registry.AddGauge("voxserve_gpu_memory_used_bytes", "GPU memory in use.", {"gpu"});
  auto& total =
      registry.AddGauge("voxserve_gpu_memory_total_bytes", "GPU memory installed.", {"gpu"});
  registry.AddCollector([this, &utilization, &used, &total] {
    for (const GpuStatus& gpu : Read()) {
      std::string index = std::to_string(gpu.index);
      utilization.WithLabels({index}).Set(gpu.utilization_percent / 100.0);
      used.WithLabels({index}).Set(static_cast<double>(gpu.memory_used_bytes));
      total.WithLabels({index}).Set(static_cast<double>(gpu.memory_total_bytes));
    }
  });
}

}  // namespace voxserve::core
