#include "core/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "spdlog/spdlog.h"

namespace voxserve::core {
namespace {

void AtomicAdd(std::atomic<double>& target, double amount) {
  double current = target.load(std::memory_order_relaxed);
  while (!target.compare_exchange_weak(current, current + amount, std::memory_order_relaxed)) {
  }
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  // Shortest text that round-trips, as Prometheus's own clients write it: bucket bounds must read
  // le="0.005", not "%.17g"'s le="0.0050000000000000001", or PromQL selectors on le miss them.
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, ec == std::errc() ? end : buffer);
}

// Label values may hold anything; the format escapes backslash, quote and newline.
std::string EscapeLabelValue(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string EscapeHelp(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string LabelSet(const std::vector<std::string>& names, const std::vector<std::string>& values,
                     const std::string& extra_name = {}, const std::string& extra_value = {}) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    out += out.empty() ? "{" : ",";
    out += names[i] + "=\"" + EscapeLabelValue(values[i]) + "\"";
  }
  if (!extra_name.empty()) {
    out += out.empty() ? "{" : ",";
    out += extra_name + "=\"" + extra_value + "\"";
  }
  if (!out.empty()) out += "}";
  return out;
}

template <typename Metric>
void RenderHeader(const Family<Metric>& family, const char* type, std::string& out) {
  out += "# HELP " + family.name() + " " + EscapeHelp(family.help()) + "\n";
  out += "# TYPE " + family.name() + " " + type + "\n";
}

template <typename Metric>
void RenderScalar(const Family<Metric>& family, const char* type, std::string& out) {
  RenderHeader(family, type, out);
  family.ForEach([&](const std::vector<std::string>& labels, const Metric& metric) {
    out += family.name() + LabelSet(family.label_names(), labels) + " " +
           FormatValue(metric.Value()) + "\n";
  });
}

void RenderHistogram(const Family<Histogram>& family, std::string& out) {
  RenderHeader(family, "histogram", out);
  family.ForEach([&](const std::vector<std::string>& labels, const Histogram& histogram) {
    Histogram::Snapshot snap = histogram.Read();
    for (size_t i = 0; i <= snap.upper_bounds.size(); ++i) {
      std::string le = i < snap.upper_bounds.size() ? FormatValue(snap.upper_bounds[i]) : "+Inf";
      out += family.name() + "_bucket" + LabelSet(family.label_names(), labels, "le", le) + " " +
             std::to_string(snap.cumulative_counts[i]) + "\n";
    }
    out += family.name() + "_sum" + LabelSet(family.label_names(), labels) + " " +
           FormatValue(snap.sum) + "\n";
    out += family.name() + "_count" + LabelSet(family.label_names(), labels) + " " +
           std::to_string(snap.count) + "\n";
  });
}

}  // namespace

void Counter::Increment(double amount) {
  if (amount < 0) return;  // counters only go up; a negative amount is a caller bug, not data
  AtomicAdd(value_, amount);
}

void Gauge::Add(double amount) { AtomicAdd(value_, amount); }

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      bucket_counts_(new std::atomic<uint64_t>[upper_bounds_.size() + 1]) {
  std::sort(upper_bounds_.begin(), upper_bounds_.end());
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) bucket_counts_[i].store(0);
}

void Histogram::Observe(double value) {
  size_t index = std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) -
                 upper_bounds_.begin();
  bucket_counts_[index].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, value);
  count_.fetch_add(1, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Read() const {
  Snapshot snap;
  snap.upper_bounds = upper_bounds_;
  uint64_t running = 0;
  for (size_t i = 0; i <= upper_bounds_.size(); ++i) {
    running += bucket_counts_[i].load(std::memory_order_relaxed);
    snap.cumulative_counts.push_back(running);
  }
  snap.sum = sum_.load(std::memory_order_relaxed);
  // The +Inf bucket and _count must agree for a consistent scrape, so count comes from buckets.
  snap.count = running;
  return snap;
}

namespace {

// A metric no family renders: what WithLabels hands out for a wrong number of label values, so
// a programming error drops one update instead of throwing out of a request. One per type; the
// first family to need a histogram gives it its buckets (its values are never read).
template <typename Metric>
Metric& DetachedMetric(const std::vector<double>& buckets) {
  if constexpr (std::is_same_v<Metric, Histogram>) {
    static Histogram detached(buckets);
    return detached;
  } else {
    static Metric detached;
    return detached;
  }
}

// Logs a family's wrong arity once, not on every request.
void ReportWrongArity(const std::string& name, size_t given, size_t expected) {
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard lock(mutex);
  if (!reported.insert(name).second) return;
  spdlog::error("metric {}: {} label values for {} label names; its updates are dropped", name,
                given, expected);
}

}  // namespace

template <typename Metric>
Metric& Family<Metric>::WithLabels(const std::vector<std::string>& label_values) {
  if (label_values.size() != label_names_.size()) {
    ReportWrongArity(name_, label_values.size(), label_names_.size());
    return DetachedMetric<Metric>(buckets_);
  }
  std::lock_guard lock(mutex_);
  auto& slot = children_[label_values];
  if (!slot) {
    if constexpr (std::is_same_v<Metric, Histogram>) {
      slot = std::make_unique<Histogram>(buckets_);
    } else {
      slot = std::make_unique<Metric>();
    }
  }
  return *slot;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

Family<Counter>& MetricsRegistry::AddCounter(const std::string& name, const std::string& help,
                                             std::vector<std::string> label_names) {
  std::lock_guard lock(mutex_);
  counters_.push_back(std::make_unique<Family<Counter>>(name, help, std::move(label_names)));
  order_.emplace_back(MetricType::kCounter, counters_.size() - 1);
  return *counters_.back();
}

Family<Gauge>& MetricsRegistry::AddGauge(const std::string& name, const std::string& help,
                                         std::vector<std::string> label_names) {
  std::lock_guard lock(mutex_);
  gauges_.push_back(std::make_unique<Family<Gauge>>(name, help, std::move(label_names)));
  order_.emplace_back(MetricType::kGauge, gauges_.size() - 1);
  return *gauges_.back();
}

Family<Histogram>& MetricsRegistry::AddHistogram(const std::string& name, const std::string& help,
                                                 std::vector<std::string> label_names,
                                                 std::vector<double> upper_bounds) {
  std::lock_guard lock(mutex_);
  histograms_.push_back(std::make_unique<Family<Histogram>>(
      name, help, std::move(label_names), std::move(upper_bounds)));
  order_.emplace_back(MetricType::kHistogram, histograms_.size() - 1);
  return *histograms_.back();
}

void MetricsRegistry::AddCollector(std::function<void()> collect) {
  std::lock_guard lock(mutex_);
  collectors_.push_back(std::move(collect));
}

std::string MetricsRegistry::RenderText() const {
  std::vector<std::function<void()>> collectors;
  {
    std::lock_guard lock(mutex_);
    collectors = collectors_;
  }
  for (const auto& collect : collectors) collect();
  std::lock_guard lock(mutex_);
  std::string out;
  for (const auto& [type, index] : order_) {
    switch (type) {
      case MetricType::kCounter: RenderScalar(*counters_[index], "counter", out); break;
      case MetricType::kGauge: RenderScalar(*gauges_[index], "gauge", out); break;
      case MetricType::kHistogram: RenderHistogram(*histograms_[index], out); break;
    }
  }
  return out;
}

std::vector<double> LatencyBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
}

}  // namespace voxserve::core
