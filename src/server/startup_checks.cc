#include "server/startup_checks.h"

#include <sched.h>

#include <algorithm>
#include <string>

#include "core/error.h"
#include "engine/engine_factory.h"
#include "scheduler/worker_launcher.h"

namespace voxserve::server {
namespace {

std::vector<int> UsableCpuIds() {
  std::vector<int> ids;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return ids;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) ids.push_back(cpu);
  }
  return ids;
}

// 0,1,2,5 -> "0-2,5": the form cpus are written in.
std::string CpuListText(const std::vector<int>& ids) {
  std::string text;
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    text += (text.empty() ? "" : ",") + std::to_string(ids[i]);
    if (j > i) text += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace

absl::Status CheckCpusUsable(const std::vector<std::string>& cpus, const std::vector<int>& usable,
                             const std::string& where) {
  for (const std::string& list : cpus) {
    auto listed = scheduler::ParseCpuList(list);
    if (!listed.ok()) {
      return core::InvalidArgument(where + ".cpus: " + std::string(listed.status().message()));
    }
    for (int cpu : *listed) {
      if (std::find(usable.begin(), usable.end(), cpu) == usable.end()) {
        return core::InvalidArgument(where + ".cpus: cpu " + std::to_string(cpu) + " (in \"" +
                                     list + "\") is not one this process may run on (" +
                                     CpuListText(usable) + ")");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckModelsCanStart(const ServerConfig& config) {
  const std::vector<int> usable = UsableCpuIds();
  const std::vector<service::ModelConfig>& models = config.service.models;
  for (size_t i = 0; i < models.size(); ++i) {
    const service::ModelConfig& model = models[i];
    const std::string where = "models[" + std::to_string(i) + "] (" + model.engine.model_id + ")";
    if (absl::Status status = engine::CheckEngineSpec(model.engine); !status.ok()) {
      return core::InvalidArgument(where + ": " + std::string(status.message()));
    }
    if (absl::Status status = CheckCpusUsable(model.scheduling.cpus, usable, where + ".scheduling");
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace voxserve::server
