// The standard process_* metrics Prometheus client libraries export (resident memory, open file
// descriptors, CPU seconds, start time), read from /proc at each scrape, plus
// voxserve_build_info{version} 1.
#pragma once

#include <string>

#include "core/metrics.h"

namespace voxserve::core {

// Registers the families and a collector; the registry must outlive nothing else here.
void AddProcessMetrics(MetricsRegistry& registry, const std::string& version);

}  // namespace voxserve::core
