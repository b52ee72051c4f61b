#include "bench_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace voxserve::voxbench {

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  size_t index = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(sorted.size()))) - 1;
  return sorted[index];
}

Percentiles Describe(std::vector<double> values) {
  Percentiles out;
  out.count = values.size();
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  out.p50 = Percentile(values, 50);
  out.p90 = Percentile(values, 90);
  out.p95 = Percentile(values, 95);
  out.p99 = Percentile(values, 99);
  out.max = values.back();
  out.mean =
      std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  return out;
}

PointSummary Summarize(const std::vector<Sample>& samples, double window_seconds) {
  PointSummary point;
  point.seconds = window_seconds;
  point.requests = samples.size();
  std::vector<double> latency, error_latency, ttfa, rtf;
  double latency_with_audio = 0, audio_total = 0;
  for (const Sample& sample : samples) {
    point.retries += sample.retries;
    if (!sample.ok) {
      ++point.errors[sample.error.empty() ? "unknown" : sample.error];
      error_latency.push_back(sample.latency_s * 1000);
      continue;
    }
    ++point.ok;
    latency.push_back(sample.latency_s * 1000);
    if (sample.ttfa_s) ttfa.push_back(*sample.ttfa_s * 1000);
    if (sample.audio_s && *sample.audio_s > 0) {
      rtf.push_back(sample.latency_s / *sample.audio_s);
      latency_with_audio += sample.latency_s;
      audio_total += *sample.audio_s;
    }
  }
  point.qps = window_seconds > 0 ? static_cast<double>(point.ok) / window_seconds : 0;
  point.latency_ms = Describe(std::move(latency));
  point.error_latency_ms = Describe(std::move(error_latency));
  point.ttfa_ms = Describe(std::move(ttfa));
  point.rtf_samples = rtf.size();
  point.rtf = Describe(std::move(rtf));
  point.rtf_aggregate = audio_total > 0 ? latency_with_audio / audio_total : 0;
  point.audio_seconds_per_second = window_seconds > 0 ? audio_total / window_seconds : 0;
  return point;
}

}  // namespace voxserve::voxbench
