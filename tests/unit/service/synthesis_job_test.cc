// How one request travels through the service: order, streaming, errors, cancellation and
// backpressure, over a FakeEngine whose segments are told apart by their sample values.
#include <thread>

#include "core/error.h"
#include "service_test_support.h"

namespace voxserve::service {
namespace {

constexpr const char* kThreeSentences = "Alpha one. Bravo two. Charlie three.";

TEST_F(ServiceTest, DeliversSegmentsInOrderEvenWhenTheyFinishOutOfOrder) {
  ServiceOptions options;
  options.scheduling.instances = 3;
  options.pipeline_depth = 3;
  options.engine.slow_marker = "Alpha";
  options.engine.slow_latency = std::chrono::milliseconds(200);
  Start(options);
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request(kThreeSentences), sink);
  ASSERT_TRUE(sink->WaitComplete());
  ASSERT_TRUE(sink->status().ok()) << sink->status();
  EXPECT_EQ(SegmentLevels(sink->bytes()),
            (std::vector<int16_t>{LevelOf('A'), LevelOf('B'), LevelOf('C')}));
}

TEST_F(ServiceTest, NonStreamingDeliversOneCompleteFileAndASummary) {
  Start();
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request(kThreeSentences), sink);
  ASSERT_TRUE(sink->WaitComplete());
  ASSERT_TRUE(sink->status().ok()) << sink->status();
  ASSERT_EQ(sink->chunks().size(), 1u);
  EXPECT_EQ(sink->start_rate(), 16000);
  SynthesisSummary summary = sink->summary();
  EXPECT_EQ(summary.segments, 3);
  EXPECT_EQ(summary.input_chars, std::string(kThreeSentences).size());
  // FakeEngine makes one sample per byte of each sentence ("Alpha one." ...): 10 + 10 + 14.
  EXPECT_DOUBLE_EQ(summary.audio_seconds, 34.0 / 16000);
  EXPECT_EQ(sink->bytes().size(), 44u + 34u * 2);
  ASSERT_TRUE(summary.time_to_first_audio_seconds.has_value());
  EXPECT_LE(*summary.time_to_first_audio_seconds, summary.total_seconds);
}

TEST_F(ServiceTest, StreamingDeliversTheFirstSegmentBeforeTheNextIsSynthesized) {
  Start();
  engine_->CloseGate();
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request(kThreeSentences, /*streaming=*/true), sink);
  engine_->ReleaseOne();
  ASSERT_TRUE(sink->WaitChunks(1));
  EXPECT_EQ(sink->completions(), 0);
  engine_->OpenGate();
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_TRUE(sink->status().ok());
  EXPECT_GE(sink->chunks().size(), 3u);
}

TEST_F(ServiceTest, AFailingSegmentEndsTheRequestWithItsError) {
  ServiceOptions options;
  options.engine.fail_marker = "Bravo";
  Start(options);
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request(kThreeSentences, /*streaming=*/true), sink);
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_EQ(sink->status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sink->completions(), 1);
  EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));
}

TEST_F(ServiceTest, CancelEndsTheRequestAtOnceAndDropsItsQueuedWork) {
  Start();
  engine_->CloseGate();
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept(Request(kThreeSentences), sink);
  ASSERT_TRUE(engine_->WaitForCalls(1));  // "Alpha one." is in the engine, "Bravo two." queued
  job->Cancel();
  ASSERT_TRUE(sink->WaitComplete());  // while the engine is still blocked
  EXPECT_EQ(sink->status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(service_->WaitIdle(std::chrono::seconds(5)));
  engine_->OpenGate();
  ASSERT_TRUE(engine_->WaitForFinishedCalls(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(engine_->texts(), std::vector<std::string>{"Alpha one."});
  EXPECT_EQ(sink->completions(), 1);
}

TEST_F(ServiceTest, PausesWhileTheClientIsBehindAndResumesWhenItCatchesUp) {
  ServiceOptions options;
  options.stream_buffer_bytes = 1024;
  Start(options);
  auto sink = std::make_shared<RecordingSink>();
  sink->buffered = 1 << 20;  // the client reads nothing
  auto job = Accept(Request("Alpha one. Bravo two. Charlie three. Delta four.", true), sink);
  // The first segment always goes (admission), then the job sees the client is behind.
  ASSERT_TRUE(engine_->WaitForFinishedCalls(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(engine_->texts().size(), 1u) << "synthesis went on while the client was behind";
  EXPECT_EQ(sink->completions(), 0);

  sink->buffered = 0;
  job->Resume();
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_TRUE(sink->status().ok());
  EXPECT_EQ(engine_->texts().size(), 4u);
}

TEST_F(ServiceTest, ADeadlineThatPassesInTheQueueEndsTheRequest) {
  ServiceOptions options;
  options.scheduling.instances = 1;
  Start(options);
  engine_->CloseGate();
  auto blocker = std::make_shared<RecordingSink>();
  auto first = Accept(Request("Alpha one."), blocker);
  ASSERT_TRUE(engine_->WaitForCalls(1));

  auto sink = std::make_shared<RecordingSink>();
  SynthesisRequest request = Request("Bravo two.");
  request.timeout = std::chrono::milliseconds(30);
  auto job = Accept(std::move(request), sink);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  engine_->OpenGate();
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_EQ(sink->status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(engine_->texts(), std::vector<std::string>{"Alpha one."});
}

// The engine got the first sentence in time but finished it after the deadline: the client
// gets the 504 it would have got a moment earlier, not a stream begun and then cut.
TEST_F(ServiceTest, AStreamWhoseFirstAudioComesAfterItsDeadlineEndsBeforeAnyByte) {
  Start();
  engine_->CloseGate();
  auto sink = std::make_shared<RecordingSink>();
  SynthesisRequest request = Request(kThreeSentences, /*streaming=*/true);
  request.timeout = std::chrono::milliseconds(30);
  auto job = Accept(std::move(request), sink);
  ASSERT_TRUE(engine_->WaitForCalls(1));
  // Setup, not a speed claim: the engine holds the sentence until the deadline is behind us.
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  engine_->OpenGate();
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_EQ(sink->status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(sink->chunks().empty());
}

}  // namespace
}  // namespace voxserve::service
