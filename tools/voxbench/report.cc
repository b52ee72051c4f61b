#include "report.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace voxserve::voxbench {
namespace {

using nlohmann::json;

json PercentilesJson(const Percentiles& p) {
  auto round = [](double v) { return std::round(v * 1000) / 1000; };
  return {{"p50", round(p.p50)}, {"p90", round(p.p90)}, {"p95", round(p.p95)},
          {"p99", round(p.p99)}, {"max", round(p.max)}, {"mean", round(p.mean)},
          {"count", p.count}};
}

std::string ErrorsText(const PointSummary& point) {
  std::string text;
  for (const auto& [kind, count] : point.errors) {
    text += (text.empty() ? "" : " ") + kind + "=" + std::to_string(count);
  }
  return text.empty() ? "-" : text;
}

}  // namespace

void PrintTable(const std::vector<PointSummary>& points, bool header) {
  if (header) {
    std::printf("%-6s %8s %8s %9s %9s %9s %9s %9s %9s %9s %7s %7s  %s\n", "mode", "level", "ok",
                "qps", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms", "ttfa_p50", "rtf_p50",
                "rtf_agg", "errors");
  }
  for (const PointSummary& p : points) {
    std::printf("%-6s %8g %8zu %9.1f %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %7.3f %7.3f  %s\n",
                p.mode.c_str(), p.level, p.ok, p.qps, p.latency_ms.p50, p.latency_ms.p90,
                p.latency_ms.p95, p.latency_ms.p99, p.latency_ms.max, p.ttfa_ms.p50, p.rtf.p50,
                p.rtf_aggregate, ErrorsText(p).c_str());
  }
  std::fflush(stdout);
}

json ToJson(const PointSummary& p) {
  return {{"mode", p.mode},
          {p.mode == "open" ? "rate" : "concurrency", p.level},
          {"seconds", p.seconds},
          {"requests", p.requests},
          {"ok", p.ok},
          {"errors", p.errors},
          {"retries", p.retries},
          {"qps", std::round(p.qps * 100) / 100},
          {"latency_ms", PercentilesJson(p.latency_ms)},
          {"error_latency_ms", PercentilesJson(p.error_latency_ms)},
          {"ttfa_ms", PercentilesJson(p.ttfa_ms)},
          {"rtf", PercentilesJson(p.rtf)},
          {"rtf_aggregate", std::round(p.rtf_aggregate * 10000) / 10000},
          {"audio_seconds_per_second", std::round(p.audio_seconds_per_second * 100) / 100}};
}

std::string ToCsv(const std::vector<PointSummary>& points) {
  std::ostringstream out;
  out << "mode,level,seconds,requests,ok,errors,qps,lat_p50_ms,lat_p90_ms,lat_p95_ms,lat_p99_ms,"
         "lat_max_ms,lat_mean_ms,ttfa_p50_ms,ttfa_p90_ms,ttfa_p95_ms,ttfa_p99_ms,rtf_p50,rtf_p95,"
         "rtf_aggregate,audio_s_per_s,error_kinds\n";
  for (const PointSummary& p : points) {
    out << p.mode << ',' << p.level << ',' << p.seconds << ',' << p.requests << ',' << p.ok << ','
        << p.requests - p.ok << ',' << p.qps << ',' << p.latency_ms.p50 << ',' << p.latency_ms.p90
        << ',' << p.latency_ms.p95 << ',' << p.latency_ms.p99 << ',' << p.latency_ms.max << ','
        << p.latency_ms.mean << ',' << p.ttfa_ms.p50 << ',' << p.ttfa_ms.p90 << ',' << p.ttfa_ms.p95
        << ',' << p.ttfa_ms.p99 << ',' << p.rtf.p50 << ',' << p.rtf.p95 << ',' << p.rtf_aggregate
        << ',' << p.audio_seconds_per_second << ',' << ErrorsText(p) << '\n';
  }
  return out.str();
}

absl::Status WriteFile(const std::string& path, const std::string& content) {
  std::ofstream file(path, std::ios::binary);
  file << content;
  file.close();
  if (!file) return absl::InternalError("cannot write " + path);
  return absl::OkStatus();
}

absl::Status Plot(const std::vector<PointSummary>& points, const std::string& title,
                  const std::string& png_path) {
  if (points.empty()) return absl::InvalidArgumentError("nothing to plot");
  std::string base = png_path + ".plot";
  if (absl::Status status = WriteFile(base + ".csv", ToCsv(points)); !status.ok()) return status;
  bool open_loop = points.front().mode == "open";
  std::string x_label = open_loop ? "offered load (requests/s)" : "concurrency (clients)";
  std::ostringstream script;
  script << "set terminal pngcairo size 1200,480 font 'DejaVu Sans,10'\n"
         << "set output '" << png_path << "'\n"
         << "set datafile separator ','\n"
         << "set key autotitle columnhead top left\n"
         << "set grid\n"
         << "set multiplot layout 1,2 title \"" << title << "\"\n"
         << (open_loop ? "" : "set logscale x 2\n") << "set xlabel '" << x_label << "'\n"
         << "set ylabel 'requests/s'\nset yrange [0:*]\n"
         << "plot '" << base << ".csv' using 2:7 with linespoints lw 2 title 'throughput (ok/s)'\n"
         << "set ylabel 'milliseconds'\nset logscale y 10\nset yrange [*:*]\n"
         << "plot '" << base << ".csv' using 2:8 with linespoints lw 2 title 'latency P50', "
         << "'' using 2:10 with linespoints lw 2 title 'latency P95', "
         << "'' using 2:11 with linespoints lw 2 title 'latency P99', "
         << "'' using 2:14 with linespoints lw 2 dt 2 title 'first audio P50'\n"
         << "unset multiplot\n";
  if (absl::Status status = WriteFile(base + ".gp", script.str()); !status.ok()) return status;
  std::string command = "gnuplot '" + base + ".gp' 2>&1";
  int rc = std::system(command.c_str());
  std::filesystem::remove(base + ".gp");
  std::filesystem::remove(base + ".csv");
  if (rc != 0) {
    return absl::UnavailableError("gnuplot failed (is gnuplot-nox installed?): exit " +
                                  std::to_string(rc));
  }
  return absl::OkStatus();
}

}  // namespace voxserve::voxbench
