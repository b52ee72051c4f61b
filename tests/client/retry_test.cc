// Retries against a real voxserve with injected faults: which errors are retried, how long the
// client waits between attempts, and where it stops.
#include "client_test_support.h"

namespace voxserve::client {

testing::VoxServeProcess* FaultServerTest::server_ = nullptr;

using RetryTest = FaultServerTest;

TEST_F(RetryTest, RetriesA503WithGrowingDelaysAndStopsAtTheLimit) {
  server_->SetFaults(R"({"fail_next": 10, "status": 503})");
  auto client = MakeClient(TestOptions({server_->url()}));
  CallInfo info;
  auto result = client->Synthesize(Hello(), &info);

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrorInfoOf(result.status()).http_status, 503);
  EXPECT_EQ(ErrorInfoOf(result.status()).code, "injected_fault");
  ASSERT_EQ(info.attempts.size(), 4u);
  EXPECT_EQ(RequestsSinceSetUp(), 4);
  // Backoff 100, 200, 400 ms (no jitter): each gap at least that, and not much more.
  double expected[] = {100, 200, 400};
  for (size_t i = 1; i < info.attempts.size(); ++i) {
    double gap = MillisBetween(info.attempts[i - 1].started, info.attempts[i].started);
    EXPECT_GE(gap, expected[i - 1]) << "retry " << i;
    EXPECT_LT(gap, expected[i - 1] + 250) << "retry " << i;
  }
}

TEST_F(RetryTest, SucceedsWhenTheServerRecoversWithinTheAttempts) {
  server_->SetFaults(R"({"fail_next": 2, "status": 502})");
  auto client = MakeClient(TestOptions({server_->url()}));
  CallInfo info;
  auto result = client->Synthesize(Hello("wav"), &info);

  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(info.attempts.size(), 3u);
  EXPECT_GT(result->audio.size(), 1000u);
  ASSERT_TRUE(result->audio_seconds.has_value());
  EXPECT_GT(*result->audio_seconds, 0.3);
}

TEST_F(RetryTest, NeverRetriesA400) {
  auto client = MakeClient(TestOptions({server_->url()}));
  SpeechRequest request = Hello();
  request.speed = 9.0;  // outside 0.25 .. 4.0
  CallInfo info;
  auto result = client->Synthesize(request, &info);

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorInfoOf(result.status()).http_status, 400);
  EXPECT_EQ(ErrorInfoOf(result.status()).param, "speed");
  EXPECT_EQ(info.attempts.size(), 1u);
  EXPECT_EQ(RequestsSinceSetUp(), 1);
}

TEST_F(RetryTest, NeverRetriesAnInjected404Either) {
  server_->SetFaults(R"({"fail_next": 5, "status": 404})");
  auto client = MakeClient(TestOptions({server_->url()}));
  CallInfo info;
  auto result = client->Synthesize(Hello(), &info);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(info.attempts.size(), 1u);
}

TEST_F(RetryTest, HonoursRetryAfterOnA429) {
  server_->SetFaults(R"({"fail_next": 1, "status": 429, "retry_after": 1})");
  ClientOptions options = TestOptions({server_->url()});
  options.retry.initial_backoff = milliseconds(10);
  auto client = MakeClient(options);
  CallInfo info;
  auto result = client->Synthesize(Hello(), &info);

  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(info.attempts.size(), 2u);
  EXPECT_EQ(info.attempts[0].http_status, 429);
  double gap = MillisBetween(info.attempts[0].started, info.attempts[1].started);
  EXPECT_GE(gap, 1000);  // the server's second, not the 10 ms backoff
  EXPECT_LT(gap, 1400);
}

TEST_F(RetryTest, GivesUpAtOnceWhenRetryAfterExceedsWhatTheCallerAllows) {
  server_->SetFaults(R"({"fail_next": 1, "status": 503, "retry_after": 120})");
  ClientOptions options = TestOptions({server_->url()});
  options.retry.max_retry_after = milliseconds(5000);
  auto client = MakeClient(options);
  Clock::time_point start = Clock::now();
  CallInfo info;
  auto result = client->Synthesize(Hello(), &info);

  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(ErrorInfoOf(result.status()).retry_after_seconds, 120);
  EXPECT_EQ(info.attempts.size(), 1u);
  EXPECT_LT(MillisBetween(start, Clock::now()), 1000);
}

TEST_F(RetryTest, RetriesAConnectionDroppedBeforeAnyAnswer) {
  server_->SetFaults(R"({"drop_next": 1})");
  auto client = MakeClient(TestOptions({server_->url()}));
  CallInfo info;
  auto result = client->Synthesize(Hello(), &info);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(info.attempts.size(), 2u);
  EXPECT_EQ(ErrorInfoOf(info.attempts[0].status).kind, ErrorKind::kConnectionLost);
}

TEST_F(RetryTest, NeverRetriesAStreamBrokenAfterAudioStarted) {
  server_->SetFaults(R"({"abort_next": 1})");
  auto client = MakeClient(TestOptions({server_->url()}));
  SpeechRequest request = Hello();
  request.input = "First sentence here. A second sentence follows. And then a third one.";
  size_t received = 0;
  CallInfo info;
  auto result = client->SynthesizeStream(
      request, [&received](std::string_view audio) { received += audio.size(); }, &info);

  ASSERT_FALSE(result.ok());
  EXPECT_EQ(ErrorInfoOf(result.status()).kind, ErrorKind::kStreamBroken) << result.status();
  EXPECT_GT(received, 0u);
  EXPECT_EQ(info.attempts.size(), 1u);
  EXPECT_EQ(RequestsSinceSetUp(), 1);
}

TEST_F(RetryTest, StreamsAudioAndSseWithDurations) {
  auto client = MakeClient(TestOptions({server_->url()}));
  SpeechRequest request = Hello();
  request.input = "One sentence. Two sentences.";
  for (StreamFormat format : {StreamFormat::kAudio, StreamFormat::kSse}) {
    request.stream = format;
    std::string audio;
    auto result = client->SynthesizeStream(
        request, [&audio](std::string_view bytes) { audio.append(bytes); });
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->audio_bytes, audio.size());
    ASSERT_TRUE(result->audio_seconds.has_value());
    // pcm: 16-bit mono at 24 kHz.
    EXPECT_NEAR(*result->audio_seconds, audio.size() / 48000.0, 0.01);
    EXPECT_GT(result->time_to_first_audio.count(), 0);
    EXPECT_LE(result->time_to_first_audio, result->total);
  }
}

TEST_F(RetryTest, ListsVoicesAndModelsAndHealth) {
  EXPECT_NE(server_->log().find("FAULT INJECTION IS ON"), std::string::npos);
  auto client = MakeClient(TestOptions({server_->url()}));
  auto voices = client->ListVoices({.language = "cmn"});
  ASSERT_TRUE(voices.ok()) << voices.status();
  ASSERT_FALSE(voices->empty());
  for (const Voice& voice : *voices) EXPECT_TRUE(voice.language.starts_with("cmn")) << voice.id;
  auto models = client->ListModels();
  ASSERT_TRUE(models.ok()) << models.status();
  EXPECT_EQ(models->front().id, "espeak");
  auto health = client->CheckHealth(HealthProbe::kReady);
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->http_status, 200);
}

}  // namespace voxserve::client
