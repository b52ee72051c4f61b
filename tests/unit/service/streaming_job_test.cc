// A request over a streaming engine: each chunk reaches the sink as it is made (a streamed
// response gets audio before its sentence ends), chunks of a later sentence wait for the
// sentence before it, a whole file collects them, and a cancellation mid-sentence ends the
// request at once and frees the engine's slot.
#include <gtest/gtest.h>

#include "core/error.h"
#include "service_test_support.h"
#include "support/fake_streaming_engine.h"

namespace voxserve::service {
namespace {

class StreamingJobTest : public ::testing::Test {
 protected:
  void Start(test_support::FakeStreamingOptions options, int max_active = 4) {
    ServiceConfig config;
    ModelConfig model;
    model.engine.model_id = "fake-stream";
    model.engine.engine = "fake-stream";
    model.scheduling.max_active = max_active;
    config.models.push_back(model);
    config.encode_threads = 2;
    options.model_id = "fake-stream";
    auto service = TtsService::Create(
        config, registry_,
        [this,
         options](const engine::EngineSpec&) -> absl::StatusOr<std::unique_ptr<engine::Engine>> {
          auto created = std::make_unique<test_support::FakeStreamingEngine>(options);
          engine_ = created.get();
          return std::unique_ptr<engine::Engine>(std::move(created));
        });
    ASSERT_TRUE(service.ok()) << service.status();
    service_ = std::move(*service);
    ASSERT_TRUE(service_->LoadModels().ok());
  }
  void TearDown() override {
    if (engine_ != nullptr) engine_->OpenGate();
    service_.reset();
  }

  std::shared_ptr<SynthesisJob> Accept(std::string text, bool streaming,
                                       const std::shared_ptr<RecordingSink>& sink) {
    SynthesisRequest request;
    request.model = "fake-stream";
    request.voice = "alice";
    request.text = std::move(text);
    request.format = audio::AudioFormat::kWav;
    request.streaming = streaming;
    auto job = service_->Synthesize(std::move(request), sink);
    EXPECT_TRUE(job.ok()) << job.status();
    return job.ok() ? *job : nullptr;
  }

  core::MetricsRegistry registry_;
  std::unique_ptr<TtsService> service_;
  test_support::FakeStreamingEngine* engine_ = nullptr;  // owned by the service's model host
};

TEST_F(StreamingJobTest, AStreamedResponseGetsTheFirstChunkBeforeItsSentenceEnds) {
  Start({});
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept("one two three four.", /*streaming=*/true, sink);
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  engine_->AllowSteps(1);
  ASSERT_TRUE(sink->WaitChunks(1));
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(2));
  EXPECT_EQ(sink->completions(), 0);  // the sentence is still being made

  engine_->OpenGate();
  ASSERT_TRUE(sink->WaitComplete());
  ASSERT_TRUE(sink->status().ok()) << sink->status();
  EXPECT_GE(sink->chunks().size(), 4u);  // one per word (the WAV header rides on the first)
  SynthesisSummary summary = sink->summary();
  EXPECT_DOUBLE_EQ(summary.audio_seconds, 40.0 / 16000);  // 4 chunks of 10 samples
  ASSERT_TRUE(summary.time_to_first_audio_seconds.has_value());
  EXPECT_LT(*summary.time_to_first_audio_seconds, summary.total_seconds);
}

TEST_F(StreamingJobTest, ChunksOfALaterSentenceWaitForTheSentenceBeforeIt) {
  Start({.gated = false, .level_from_text = true});
  auto sink = std::make_shared<RecordingSink>();
  // Both sentences are active together; the short second one ends first.
  auto job = Accept("Alpha one two three four five. Bravo six.", /*streaming=*/false, sink);
  ASSERT_TRUE(sink->WaitComplete());
  ASSERT_TRUE(sink->status().ok()) << sink->status();
  ASSERT_EQ(sink->chunks().size(), 1u);  // a whole file collects the chunks
  EXPECT_EQ(SegmentLevels(sink->bytes()), (std::vector<int16_t>{LevelOf('A'), LevelOf('B')}));
  EXPECT_EQ(sink->bytes().size(), 44u + (6 + 2) * 10 * 2);
}

TEST_F(StreamingJobTest, CancelMidSentenceEndsTheRequestAndFreesTheEnginesSlot) {
  Start({});
  auto sink = std::make_shared<RecordingSink>();
  auto job = Accept("one two three four five six.", /*streaming=*/true, sink);
  ASSERT_TRUE(engine_->WaitUntilWaitingAtStep(1));
  engine_->AllowSteps(1);
  ASSERT_TRUE(sink->WaitChunks(1));

  job->Cancel();
  ASSERT_TRUE(sink->WaitComplete());
  EXPECT_EQ(sink->status().code(), absl::StatusCode::kCancelled);
  size_t chunks_at_cancel = sink->chunks().size();
  engine_->OpenGate();
  ASSERT_TRUE(engine_->WaitForReleased(1));
  EXPECT_EQ(sink->completions(), 1);
  EXPECT_EQ(sink->chunks().size(), chunks_at_cancel);
}

}  // namespace
}  // namespace voxserve::service
