// What would otherwise only fail once a model loads, checked before the server serves: the
// engine and its options (engine::CheckEngineSpec) and the CPUs workers are pinned to. A server
// that cannot become ready must not start and sit there unready: these errors exit 2, as the
// config file's own do.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "server/server_config.h"

namespace voxserve::server {

// InvalidArgument naming the model (index and id) and the key.
absl::Status CheckModelsCanStart(const ServerConfig& config);

// `cpus` entries (scheduling.cpus) against the CPUs this process may run on (`usable`, as
// sched_getaffinity reports them): a worker pinned to another CPU could never start.
absl::Status CheckCpusUsable(const std::vector<std::string>& cpus, const std::vector<int>& usable,
                             const std::string& where);

}  // namespace voxserve::server
