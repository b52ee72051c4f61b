#include "core/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

namespace voxserve::core {
namespace {

struct ProcessGauges {
  Gauge& resident_bytes;
  Gauge& virtual_bytes;
  Gauge& open_fds;
  Gauge& max_fds;
  Counter& cpu_seconds;  // advanced to the kernel's figure at each scrape
  Gauge& start_time;
};

// Fields of /proc/self/stat after the command name (which may contain spaces): index 0 is the
// state, the 3rd field of the file.
std::vector<std::string> StatFields() {
  std::ifstream file("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  std::vector<std::string> fields;
  if (close == std::string::npos) return fields;
  std::istringstream rest(text.substr(close + 2));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

double BootTimeSeconds() {
  std::ifstream file("/proc/stat");
  for (std::string line; std::getline(file, line);) {
    if (line.rfind("btime ", 0) == 0) return std::stod(line.substr(6));
  }
  return 0;
}

void Collect(const ProcessGauges& gauges) {
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::vector<std::string> stat = StatFields();
  // proc(5): utime 14, stime 15, starttime 22, vsize 23, rss 24 (1-based over the whole line).
  if (stat.size() > 21) {
    // Concurrent scrapes must not both add the same delta.
    static std::mutex cpu_mutex;
    std::lock_guard lock(cpu_mutex);
    double cpu = (std::stod(stat[11]) + std::stod(stat[12])) / ticks;
    double counted = gauges.cpu_seconds.Value();
    if (cpu > counted) gauges.cpu_seconds.Increment(cpu - counted);
    gauges.virtual_bytes.Set(std::stod(stat[20]));
    gauges.resident_bytes.Set(std::stod(stat[21]) * page);
  }
  std::error_code ec;
  size_t fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  gauges.open_fds.Set(static_cast<double>(fds));
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
    gauges.max_fds.Set(static_cast<double>(limit.rlim_cur));
}

}  // namespace

void AddProcessMetrics(MetricsRegistry& registry, const std::string& version) {
  registry
      .AddGauge("voxserve_build_info", "Always 1; the labels say which build is running.",
                {"version"})
      .WithLabels({version})
      .Set(1);
  ProcessGauges gauges{
      registry.AddGauge("process_resident_memory_bytes", "Resident memory size in bytes.")
          .WithLabels({}),
      registry.AddGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.")
          .WithLabels({}),
      registry.AddGauge("process_open_fds", "Number of open file descriptors.").WithLabels({}),
      registry.AddGauge("process_max_fds", "Maximum number of open file descriptors.")
          .WithLabels({}),
      registry.AddCounter("process_cpu_seconds_total", "Total user and system CPU time in seconds.")
          .WithLabels({}),
      registry
          .AddGauge("process_start_time_seconds",
                    "Start time of the process since the Unix epoch in seconds.")
          .WithLabels({}),
  };
  std::vector<std::string> stat = StatFields();
  if (stat.size() > 19) {
    gauges.start_time.Set(BootTimeSeconds() +
                          std::stod(stat[19]) / static_cast<double>(sysconf(_SC_CLK_TCK)));
  }
  registry.AddCollector([gauges] { Collect(gauges); });
}

}  // namespace voxserve::core
