#include "core/process_metrics.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "core/gpu_monitor.h"

namespace voxserve::core {
namespace {

double Sample(const std::string& text, const std::string& name) {
  std::smatch match;
  std::regex line("(^|\\n)" + name + " ([^\\n]+)");
  if (!std::regex_search(text, match, line)) return -1;
  return std::stod(match[2]);
}

TEST(ProcessMetricsTest, ReadsThisProcessAtEachScrape) {
  MetricsRegistry registry;
  AddProcessMetrics(registry, "1.2.3");
  std::string text = registry.RenderText();
  EXPECT_NE(text.find("voxserve_build_info{version=\"1.2.3\"} 1"), std::string::npos) << text;
  EXPECT_GT(Sample(text, "process_resident_memory_bytes"), 1 << 20);
  EXPECT_GT(Sample(text, "process_virtual_memory_bytes"), 1 << 20);
  EXPECT_GE(Sample(text, "process_open_fds"), 3);  // stdin, stdout, stderr at least
  EXPECT_GT(Sample(text, "process_max_fds"), 0);
  EXPECT_GE(Sample(text, "process_cpu_seconds_total"), 0);
  double started = Sample(text, "process_start_time_seconds");
  double now = static_cast<double>(std::time(nullptr));
  EXPECT_GT(started, now - 3600);
  EXPECT_LE(started, now + 1);
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos);
}

TEST(ProcessMetricsTest, CpuSecondsNeverGoBackwards) {
  MetricsRegistry registry;
  AddProcessMetrics(registry, "x");
  double first = Sample(registry.RenderText(), "process_cpu_seconds_total");
  volatile double sink = 0;
  for (int i = 0; i < 20'000'000; ++i) sink = sink + i;  // burn a little CPU
  EXPECT_GE(Sample(registry.RenderText(), "process_cpu_seconds_total"), first);
}

TEST(GpuMonitorTest, AMissingDriverMeansNoMonitorNotAnError) {
  EXPECT_EQ(GpuMonitor::Open("libvoxserve-no-such-nvml.so.1"), nullptr);
  // A library that exists but is not NVML lacks the symbols: also no monitor.
  EXPECT_EQ(GpuMonitor::Open("libm.so.6"), nullptr);
}

TEST(MetricsCollectorTest, CollectorsRunBeforeEachRender) {
  MetricsRegistry registry;
  Gauge& gauge = registry.AddGauge("voxserve_test_value", "test").WithLabels({});
  int calls = 0;
  registry.AddCollector([&] { gauge.Set(++calls); });
  EXPECT_NE(registry.RenderText().find("voxserve_test_value 1"), std::string::npos);
  EXPECT_NE(registry.RenderText().find("voxserve_test_value 2"), std::string::npos);
}

}  // namespace
}  // namespace voxserve::core
