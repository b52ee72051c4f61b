// A small Prometheus registry: counters, gauges and histograms with bounded label sets, rendered
// in the text exposition format (version 0.0.4); kept to what /metrics needs and checked against
// promtool and a real Prometheus scrape in the tests.
//
// Why not Debian's prometheus-cpp-dev (1.0.1, weighed for issue 10): we need only its core
// (registry + text serializer; /metrics is served by our own HTTP server), but the -dev package
// depends on civetweb, libcurl4-openssl-dev and zlib1g-dev for its pull/push servers. Its
// Family::Add throws std::invalid_argument on bad labels, which our request paths must not,
// and its Histogram::Observe takes a mutex where ours is lock-free atomics on the engine and
// I/O threads. Switching would touch every metrics user for no feature we lack. Revisit if we
// need what it adds (summaries with quantiles, the protobuf format, a push gateway).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace voxserve::core {

// All metric types are safe cross thread; updates are lock-free atomics.
class Counter {
 public:
  void Increment(double amount = 1.0);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void Set(double value) { value_.store(value, std::memory_order_relaxed); }
  void Add(double amount);
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);

  struct Snapshot {
    std::vector<double> upper_bounds;
    std::vector<uint64_t> cumulative_counts;  // one per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Read() const;

 private:
  std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> bucket_counts_;  // non-cumulative, +Inf last
  std::atomic<double> sum_{0.0};
  std::atomic<uint64_t> count_{0};
};

enum class MetricType { kCounter, kGauge, kHistogram };

// A metric name with its label names; each distinct label-value tuple is one child. Children are
// created on first use and live as long as the registry, so references to them stay valid.
template <typename Metric>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> label_names,
         std::vector<double> buckets = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        label_names_(std::move(label_names)),
        buckets_(std::move(buckets)) {}

  // Never throws (request paths call it): a wrong number of values gets a detached metric.
  Metric& WithLabels(const std::vector<std::string>& label_values);

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

  template <typename Visit>
  void ForEach(Visit&& visit) const {
    std::lock_guard lock(mutex_);
    for (const auto& [labels, metric] : children_) visit(labels, *metric);
  }

 private:
  std::string name_;
  std::string help_;
  std::vector<std::string> label_names_;
  std::vector<double> buckets_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> children_;
};

// Owns every metric family. Registration happens at startup; rendering at each scrape.
class MetricsRegistry {
 public:
  Family<Counter>& AddCounter(const std::string& name, const std::string& help,
                              std::vector<std::string> label_names = {});
  Family<Gauge>& AddGauge(const std::string& name, const std::string& help,
                          std::vector<std::string> label_names = {});
  Family<Histogram>& AddHistogram(const std::string& name, const std::string& help,
                                  std::vector<std::string> label_names,
                                  std::vector<double> upper_bounds);

  // Runs `collect` at the start of every RenderText, for values read on demand (process and GPU
  // figures). It runs on the scraping thread and must not register metrics.
  void AddCollector(std::function<void()> collect);

  std::string RenderText() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::function<void()>> collectors_;
  // Kept in registration order so the exposition is stable.
  std::vector<std::unique_ptr<Family<Counter>>> counters_;
  std::vector<std::unique_ptr<Family<Gauge>>> gauges_;
  std::vector<std::unique_ptr<Family<Histogram>>> histograms_;
  std::vector<std::pair<MetricType, size_t>> order_;
};

// Bucket bounds for latencies in seconds: 5 ms .. 60 s.
std::vector<double> LatencyBuckets();

}  // namespace voxserve::core
