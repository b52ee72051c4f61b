#include "core/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace voxserve::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(Counter, StartsAtZeroAndAddsIncrements) {
  Counter counter;
  EXPECT_EQ(counter.Value(), 0.0);
  counter.Increment();
  counter.Increment(2.5);
  EXPECT_EQ(counter.Value(), 3.5);
}

TEST(Counter, IgnoresNegativeIncrements) {
  Counter counter;
  counter.Increment(4);
  counter.Increment(-1);
  EXPECT_EQ(counter.Value(), 4.0);
}

TEST(Gauge, SetReplacesAndAddAccumulatesInBothDirections) {
  Gauge gauge;
  gauge.Set(10);
  gauge.Add(2);
  gauge.Add(-5);
  EXPECT_EQ(gauge.Value(), 7.0);
  gauge.Set(1);
  EXPECT_EQ(gauge.Value(), 1.0);
}

TEST(Histogram, BucketsAreCumulativeAndUpperBoundsInclusive) {
  Histogram histogram({1, 2, 5});
  for (double value : {0.5, 1.0, 3.0, 10.0}) histogram.Observe(value);
  Histogram::Snapshot snap = histogram.Read();
  EXPECT_THAT(snap.upper_bounds, ElementsAre(1, 2, 5));
  EXPECT_THAT(snap.cumulative_counts, ElementsAre(2u, 2u, 3u, 4u));  // le=1, 2, 5, +Inf
}

TEST(Histogram, InfBucketEqualsCount) {
  Histogram histogram({0.1, 1});
  for (double value : {0.05, 0.5, 7.0, 100.0}) histogram.Observe(value);
  Histogram::Snapshot snap = histogram.Read();
  EXPECT_EQ(snap.count, 4u);
  EXPECT_EQ(snap.cumulative_counts.back(), snap.count);
}

TEST(Histogram, SumsObservedValues) {
  Histogram histogram({1});
  for (double value : {0.5, 1.0, 3.0}) histogram.Observe(value);
  EXPECT_DOUBLE_EQ(histogram.Read().sum, 4.5);
}

TEST(Histogram, SortsUnorderedBounds) {
  Histogram histogram({5, 1, 2});
  histogram.Observe(1.5);
  Histogram::Snapshot snap = histogram.Read();
  EXPECT_THAT(snap.upper_bounds, ElementsAre(1, 2, 5));
  EXPECT_THAT(snap.cumulative_counts, ElementsAre(0u, 1u, 1u, 1u));
}

TEST(Family, SameLabelValuesGiveTheSameChild) {
  MetricsRegistry registry;
  Family<Counter>& family = registry.AddCounter("requests_total", "Requests.", {"route"});
  Counter& first = family.WithLabels({"/v1/audio/speech"});
  Counter& again = family.WithLabels({"/v1/audio/speech"});
  Counter& other = family.WithLabels({"/health"});
  EXPECT_EQ(&first, &again);
  EXPECT_NE(&first, &other);
}

// It runs on request paths: a wrong arity must not throw out of a request, nor show in /metrics.
TEST(Family, WithLabelsOfTheWrongArityGivesADetachedMetricAndNoSample) {
  MetricsRegistry registry;
  Family<Counter>& family = registry.AddCounter("requests_total", "Requests.", {"route", "code"});
  Counter* too_few = nullptr;
  Counter* too_many = nullptr;
  EXPECT_NO_THROW(too_few = &family.WithLabels({"/health"}));
  EXPECT_NO_THROW(too_many = &family.WithLabels({"/health", "200", "extra"}));
  too_few->Increment();
  too_many->Increment();
  family.WithLabels({"/health", "200"}).Increment();

  EXPECT_EQ(too_few, too_many);
  EXPECT_NE(too_few, &family.WithLabels({"/health", "200"}));
  EXPECT_EQ(registry.RenderText(),
            "# HELP requests_total Requests.\n"
            "# TYPE requests_total counter\n"
            "requests_total{route=\"/health\",code=\"200\"} 1\n");
}

TEST(MetricsRegistry, RendersHelpAndTypeLinesBeforeSamples) {
  MetricsRegistry registry;
  registry.AddCounter("jobs_total", "Jobs finished.").WithLabels({}).Increment(3);
  EXPECT_EQ(registry.RenderText(),
            "# HELP jobs_total Jobs finished.\n"
            "# TYPE jobs_total counter\n"
            "jobs_total 3\n");
}

TEST(MetricsRegistry, RendersGaugeType) {
  MetricsRegistry registry;
  registry.AddGauge("queue_depth", "Queued segments.").WithLabels({}).Set(2);
  EXPECT_THAT(registry.RenderText(), HasSubstr("# TYPE queue_depth gauge\nqueue_depth 2\n"));
}

TEST(MetricsRegistry, RendersLabelsInDeclaredOrder) {
  MetricsRegistry registry;
  registry.AddCounter("http_requests_total", "Requests.", {"route", "code"})
      .WithLabels({"/health", "200"})
      .Increment();
  EXPECT_THAT(registry.RenderText(),
              HasSubstr("http_requests_total{route=\"/health\",code=\"200\"} 1\n"));
}

TEST(MetricsRegistry, EscapesBackslashQuoteAndNewlineInLabelValues) {
  MetricsRegistry registry;
  registry.AddCounter("odd_total", "Odd labels.", {"value"}).WithLabels({"a\\b\"c\nd"}).Increment();
  EXPECT_THAT(registry.RenderText(), HasSubstr("odd_total{value=\"a\\\\b\\\"c\\nd\"} 1\n"));
}

TEST(MetricsRegistry, EscapesBackslashAndNewlineInHelp) {
  MetricsRegistry registry;
  registry.AddGauge("g", "line one\nback\\slash");
  EXPECT_THAT(registry.RenderText(), HasSubstr("# HELP g line one\\nback\\\\slash\n"));
}

TEST(MetricsRegistry, RendersHistogramBucketsSumAndCount) {
  MetricsRegistry registry;
  Histogram& histogram =
      registry.AddHistogram("latency_seconds", "Latency.", {"route"}, {0.5, 2}).WithLabels({"/x"});
  histogram.Observe(0.25);
  histogram.Observe(1);
  histogram.Observe(4);
  EXPECT_EQ(registry.RenderText(),
            "# HELP latency_seconds Latency.\n"
            "# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{route=\"/x\",le=\"0.5\"} 1\n"
            "latency_seconds_bucket{route=\"/x\",le=\"2\"} 2\n"
            "latency_seconds_bucket{route=\"/x\",le=\"+Inf\"} 3\n"
            "latency_seconds_sum{route=\"/x\"} 5.25\n"
            "latency_seconds_count{route=\"/x\"} 3\n");
}

// Bucket bounds must render the way every Prometheus client renders them (shortest round-trip),
// or PromQL selectors such as {le="0.005"} match nothing.
TEST(MetricsRegistry, RendersBucketBoundsInShortestForm) {
  MetricsRegistry registry;
  registry.AddHistogram("h_seconds", "H.", {}, {0.005, 0.1, 2.5}).WithLabels({});
  std::string text = registry.RenderText();
  EXPECT_THAT(text, HasSubstr("h_seconds_bucket{le=\"0.005\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("h_seconds_bucket{le=\"0.1\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("h_seconds_bucket{le=\"2.5\"} 0\n"));
}

TEST(MetricsRegistry, RendersValuesExactlyWithoutSpuriousDigits) {
  MetricsRegistry registry;
  Gauge& gauge = registry.AddGauge("g", "G.").WithLabels({});
  gauge.Set(0.1);
  EXPECT_THAT(registry.RenderText(), HasSubstr("\ng 0.1\n"));
  gauge.Add(0.2);  // 0.30000000000000004 in binary; every digit is needed to round-trip
  EXPECT_THAT(registry.RenderText(), HasSubstr("\ng 0.30000000000000004\n"));
}

TEST(MetricsRegistry, RendersSpecialValuesInPrometheusSpelling) {
  MetricsRegistry registry;
  Gauge& gauge = registry.AddGauge("g", "G.").WithLabels({});
  gauge.Set(std::numeric_limits<double>::infinity());
  EXPECT_THAT(registry.RenderText(), HasSubstr("\ng +Inf\n"));
  gauge.Set(-std::numeric_limits<double>::infinity());
  EXPECT_THAT(registry.RenderText(), HasSubstr("\ng -Inf\n"));
  gauge.Set(std::numeric_limits<double>::quiet_NaN());
  EXPECT_THAT(registry.RenderText(), HasSubstr("\ng NaN\n"));
}

TEST(MetricsRegistry, RendersFamiliesInRegistrationOrderAcrossTypes) {
  MetricsRegistry registry;
  registry.AddGauge("zeta", "Registered first.");
  registry.AddCounter("alpha_total", "Registered second.");
  registry.AddHistogram("mid_seconds", "Registered third.", {}, {1});
  registry.AddGauge("beta", "Registered fourth.");
  std::string text = registry.RenderText();
  size_t zeta = text.find("# HELP zeta ");
  size_t alpha = text.find("# HELP alpha_total ");
  size_t mid = text.find("# HELP mid_seconds ");
  size_t beta = text.find("# HELP beta ");
  ASSERT_NE(beta, std::string::npos);
  EXPECT_LT(zeta, alpha);
  EXPECT_LT(alpha, mid);
  EXPECT_LT(mid, beta);
}

TEST(MetricsRegistry, RendersTheSameTextOnEveryScrape) {
  MetricsRegistry registry;
  Family<Counter>& family = registry.AddCounter("c_total", "C.", {"k"});
  for (const char* key : {"b", "a", "c"}) family.WithLabels({key}).Increment();
  EXPECT_EQ(registry.RenderText(), registry.RenderText());
}

TEST(MetricsRegistry, FamilyWithoutChildrenRendersOnlyItsHeader) {
  MetricsRegistry registry;
  registry.AddCounter("unused_total", "Never touched.", {"k"});
  EXPECT_THAT(registry.RenderText(), Not(HasSubstr("unused_total{")));
}

TEST(Counter, ConcurrentIncrementsFromEightThreadsSumExactly) {
  constexpr int kThreads = 8;
  constexpr int kIncrementsPerThread = 20000;
  MetricsRegistry registry;
  Family<Counter>& family = registry.AddCounter("hits_total", "Hits.", {"shard"});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&family] {
      // Looking the child up on each call also exercises the family's map under contention.
      for (int i = 0; i < kIncrementsPerThread; ++i) family.WithLabels({"0"}).Increment();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(family.WithLabels({"0"}).Value(), double{kThreads} * kIncrementsPerThread);
}

TEST(Histogram, ConcurrentObservationsFromEightThreadsAreAllCounted) {
  constexpr int kThreads = 8;
  constexpr int kObservationsPerThread = 20000;
  Histogram histogram({0.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&histogram] {
      for (int i = 0; i < kObservationsPerThread; ++i) histogram.Observe(1.0);
    });
  }
  for (std::thread& thread : threads) thread.join();
  Histogram::Snapshot snap = histogram.Read();
  EXPECT_EQ(snap.count, uint64_t{kThreads} * kObservationsPerThread);
  EXPECT_EQ(snap.sum, double{kThreads} * kObservationsPerThread);
}

TEST(LatencyBuckets, AreAscendingFromFiveMillisecondsToSixtySeconds) {
  std::vector<double> buckets = LatencyBuckets();
  ASSERT_FALSE(buckets.empty());
  EXPECT_EQ(buckets.front(), 0.005);
  EXPECT_EQ(buckets.back(), 60.0);
  EXPECT_TRUE(std::is_sorted(buckets.begin(), buckets.end()));
}

// The exposition format is checked against a real peer: Prometheus's own linter.
TEST(MetricsRegistry, RenderedTextPassesPromtool) {
  constexpr const char* kPromtool = "/usr/bin/promtool";
  if (access(kPromtool, X_OK) != 0) GTEST_SKIP() << kPromtool << " is not installed";

  MetricsRegistry registry;
  registry.AddCounter("requests_total", "Requests answered.", {"route", "code"})
      .WithLabels({"/v1/audio/speech", "200"})
      .Increment(5);
  registry.AddGauge("voxserve_queue_depth", "Segments waiting.").WithLabels({}).Set(3);
  Histogram& latency = registry
                           .AddHistogram("voxserve_request_duration_seconds",
                                         "Time to the last byte.", {"route"}, LatencyBuckets())
                           .WithLabels({"a \"quoted\\\" route\nwith newline"});
  latency.Observe(0.02);
  latency.Observe(1.7);

  std::string path = ::testing::TempDir() + "voxserve_metrics_" + std::to_string(getpid()) + ".txt";
  {
    std::ofstream file(path);
    file << registry.RenderText();
  }
  std::string command = std::string(kPromtool) + " check metrics < " + path;
  int rc = std::system(command.c_str());
  std::remove(path.c_str());
  EXPECT_EQ(rc, 0) << command;
}

}  // namespace
}  // namespace voxserve::core
