// voxbench's outputs: a table on stdout, JSON and CSV files, and a gnuplot PNG of throughput
// and latency against concurrency (closed loop) or offered rate (open loop).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench_stats.h"
#include "nlohmann/json.hpp"

namespace voxserve::voxbench {

// `header`: print the column names first.
void PrintTable(const std::vector<PointSummary>& points, bool header = true);
nlohmann::json ToJson(const PointSummary& point);
std::string ToCsv(const std::vector<PointSummary>& points);  // header + one row per point
absl::Status WriteFile(const std::string& path, const std::string& content);
// Runs gnuplot (Debian's gnuplot-nox) on the points; `title` heads the figure.
absl::Status Plot(const std::vector<PointSummary>& points, const std::string& title,
                  const std::string& png_path);

}  // namespace voxserve::voxbench
