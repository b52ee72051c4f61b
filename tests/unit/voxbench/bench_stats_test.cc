// voxbench's statistics on inputs whose answers are known by hand.
#include "bench_stats.h"

#include <gtest/gtest.h>

#include "corpus.h"

namespace voxserve::voxbench {
namespace {

TEST(PercentileTest, NearestRankOnOneToHundred) {
  std::vector<double> values;
  for (int i = 1; i <= 100; ++i) values.push_back(i);
  EXPECT_EQ(Percentile(values, 50), 50);
  EXPECT_EQ(Percentile(values, 90), 90);
  EXPECT_EQ(Percentile(values, 95), 95);
  EXPECT_EQ(Percentile(values, 99), 99);
  EXPECT_EQ(Percentile(values, 100), 100);
  EXPECT_EQ(Percentile(values, 0), 1);
}

TEST(PercentileTest, SmallSamplesRoundUp) {
  // Ten values: P50 is the 5th, P90 the 9th, P95 and P99 the 10th.
  std::vector<double> values = {10, 20, 30, 40, 50, 60, 70, 80, 90, 1000};
  EXPECT_EQ(Percentile(values, 50), 50);
  EXPECT_EQ(Percentile(values, 90), 90);
  EXPECT_EQ(Percentile(values, 95), 1000);
  EXPECT_EQ(Percentile(values, 99), 1000);
  EXPECT_EQ(Percentile({}, 50), 0);
  EXPECT_EQ(Percentile({7}, 99), 7);
}

TEST(DescribeTest, SortsAndAverages) {
  Percentiles p = Describe({3, 1, 2, 4});
  EXPECT_EQ(p.count, 4u);
  EXPECT_EQ(p.p50, 2);
  EXPECT_EQ(p.max, 4);
  EXPECT_DOUBLE_EQ(p.mean, 2.5);
}

Sample Ok(double latency_s, double ttfa_s, std::optional<double> audio_s) {
  Sample sample;
  sample.ok = true;
  sample.latency_s = latency_s;
  sample.ttfa_s = ttfa_s;
  sample.audio_s = audio_s;
  return sample;
}

Sample Failed(const std::string& kind) {
  Sample sample;
  sample.error = kind;
  sample.latency_s = 0.001;
  return sample;
}

TEST(SummarizeTest, ThroughputLatencyRtfAndErrors) {
  // 8 successes over a 2-second window: latencies 0.1 .. 0.8 s, each for 2 s of audio except the
  // last (mp3: length unknown); 3 errors.
  std::vector<Sample> samples;
  for (int i = 1; i <= 7; ++i) samples.push_back(Ok(0.1 * i, 0.01 * i, 2.0));
  samples.push_back(Ok(0.8, 0.08, std::nullopt));
  samples.push_back(Failed("http_429"));
  samples.push_back(Failed("http_429"));
  samples.push_back(Failed("timeout"));
  samples.back().latency_s = 0.004;

  PointSummary point = Summarize(samples, 2.0);
  EXPECT_EQ(point.requests, 11u);
  EXPECT_EQ(point.ok, 8u);
  EXPECT_DOUBLE_EQ(point.qps, 4.0);
  EXPECT_EQ(point.errors.at("http_429"), 2u);
  EXPECT_EQ(point.errors.at("timeout"), 1u);
  EXPECT_NEAR(point.latency_ms.p50, 400, 1e-9);  // 4th of 8
  EXPECT_NEAR(point.latency_ms.p99, 800, 1e-9);
  EXPECT_NEAR(point.latency_ms.mean, 450, 1e-9);
  // Failures have their own latency: 1, 1 and 4 ms.
  EXPECT_EQ(point.error_latency_ms.count, 3u);
  EXPECT_NEAR(point.error_latency_ms.p50, 1, 1e-9);
  EXPECT_NEAR(point.error_latency_ms.max, 4, 1e-9);
  EXPECT_NEAR(point.ttfa_ms.p50, 40, 1e-9);
  // RTF per request = latency / 2 s for the 7 with a known length: 0.05 .. 0.35.
  EXPECT_EQ(point.rtf_samples, 7u);
  EXPECT_NEAR(point.rtf.p50, 0.2, 1e-9);  // 4th of 7
  EXPECT_NEAR(point.rtf.max, 0.35, 1e-9);
  // Aggregate: Σ latency (2.8 s) / Σ audio (14 s) = 0.2; 14 s of audio in a 2 s window.
  EXPECT_NEAR(point.rtf_aggregate, 0.2, 1e-9);
  EXPECT_NEAR(point.audio_seconds_per_second, 7.0, 1e-9);
}

TEST(SummarizeTest, RetriesAddUpOverSuccessesAndFailures) {
  std::vector<Sample> samples = {Ok(0.1, 0.01, 1.0), Ok(0.2, 0.02, 1.0), Failed("timeout")};
  samples[1].retries = 2;  // failed over twice, then succeeded
  samples[2].retries = 1;  // retried once, failed anyway
  EXPECT_EQ(Summarize(samples, 1.0).retries, 3u);
}

TEST(SummarizeTest, EmptyWindowIsAllZeros) {
  PointSummary point = Summarize({}, 1.0);
  EXPECT_EQ(point.requests, 0u);
  EXPECT_EQ(point.qps, 0);
  EXPECT_EQ(point.latency_ms.count, 0u);
}

TEST(CorpusTest, SkipsBlankLinesAndComments) {
  auto texts = ParseCorpus("# a comment\n\nHello there.\r\n   你好。\n  # indented comment\n");
  ASSERT_EQ(texts.size(), 2u);
  EXPECT_EQ(texts[0], "Hello there.");
  EXPECT_EQ(texts[1], "你好。");
}

}  // namespace
}  // namespace voxserve::voxbench
