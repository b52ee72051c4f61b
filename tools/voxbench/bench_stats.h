// What voxbench measures per request and how one load point is summarized: throughput,
// latency and time-to-first-audio percentiles, real-time factor, errors by kind.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace voxserve::voxbench {

struct Sample {
  bool ok = false;
  std::string error;              // "http_429", "timeout", ... when !ok
  double latency_s = 0;           // intended start → last byte (open loop: includes queueing)
  std::optional<double> ttfa_s;   // intended start → first audio byte
  std::optional<double> audio_s;  // seconds of audio received, when the format says it
  size_t bytes = 0;
  int retries = 0;                // attempts after the first (--retries; failover to another URL)
};

struct Percentiles {
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0, max = 0, mean = 0;
  size_t count = 0;
};

struct PointSummary {
  std::string mode;     // "closed" or "open"
  double level = 0;     // concurrency (closed) or offered requests/s (open)
  double seconds = 0;   // measured window
  size_t requests = 0;  // completed in the window, ok or not
  size_t ok = 0;
  size_t retries = 0;  // Σ attempts after the first, ok or not
  std::map<std::string, size_t> errors;
  double qps = 0;  // ok / seconds
  Percentiles latency_ms;        // successful requests
  Percentiles error_latency_ms;  // failed ones: how quickly a 429 or 503 comes back under overload
  Percentiles ttfa_ms;
  // Real-time factor = processing time / audio time (below 1: faster than real time), per
  // request (latency / audio seconds); `rtf_aggregate` = Σ latency / Σ audio.
  Percentiles rtf;
  double rtf_aggregate = 0;
  double audio_seconds_per_second = 0;  // Σ audio / window: how many real-time streams it sustains
  size_t rtf_samples = 0;               // requests whose audio length was known
};

// Nearest-rank percentile of `sorted` (ascending): the smallest value with at least p% of the
// values at or below it. p = 100 gives the max. Empty input gives 0.
double Percentile(const std::vector<double>& sorted, double p);
Percentiles Describe(std::vector<double> values);
PointSummary Summarize(const std::vector<Sample>& samples, double window_seconds);

}  // namespace voxserve::voxbench
