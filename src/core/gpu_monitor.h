// GPU utilization and memory from NVIDIA's NVML, loaded at run time (dlopen) so the server needs
// no CUDA to build or run: without a driver there is simply no monitor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/metrics.h"

namespace voxserve::core {

struct GpuStatus {
  int index = 0;
  std::string name;
  unsigned utilization_percent = 0;         // kernels running, over NVML's last sample period
  unsigned memory_utilization_percent = 0;  // memory controller busy
  uint64_t memory_used_bytes = 0;
  uint64_t memory_total_bytes = 0;
};

// Read() is safe cross thread (NVML is thread-safe).
class GpuMonitor {
 public:
  // Null when the library is missing, fails to initialise or finds no GPU. Never an error: a
  // server without a GPU is a normal server.
  static std::unique_ptr<GpuMonitor> Open(const std::string& library = "libnvidia-ml.so.1");
  ~GpuMonitor();

  // GPUs whose figures could be read; one that fails (e.g. fell off the bus) is left out.
  std::vector<GpuStatus> Read() const;

  // voxserve_gpu_utilization_ratio, voxserve_gpu_memory_used_bytes and
  // voxserve_gpu_memory_total_bytes labelled by gpu index, read at each scrape. The monitor must
  // outlive the registry's scrapes.
  void AddMetrics(MetricsRegistry& registry) const;

  struct Api;

 private:
  GpuMonitor(void* library, std::unique_ptr<Api> api, unsigned count);

  void* library_;
  std::unique_ptr<Api> api_;
  unsigned count_;
};

}  // namespace voxserve::core
