// The same Client over voxserve's gRPC API (grpc:// endpoints): unary and streamed synthesis,
// catalog calls, errors mapped like their HTTP equivalents, failover between the two protocols.
#include "client_test_support.h"

namespace voxserve::client {
namespace {

using GrpcTest = FaultServerTest;

TEST_F(GrpcTest, SynthesizesWholeFilesAndStreams) {
  std::string url = server_->grpc_url();
  ASSERT_FALSE(url.empty()) << server_->log();
  auto client = MakeClient(TestOptions({url}));
  auto wav = client->Synthesize(Hello("wav"));
  ASSERT_TRUE(wav.ok()) << wav.status();
  EXPECT_EQ(wav->audio.substr(0, 4), "RIFF");
  EXPECT_EQ(wav->content_type, "audio/wav");
  ASSERT_TRUE(wav->audio_seconds.has_value());
  EXPECT_GT(*wav->audio_seconds, 0.3);

  SpeechRequest request = Hello("pcm");
  request.input = "One sentence. Two sentences.";
  size_t bytes = 0;
  auto streamed =
      client->SynthesizeStream(request, [&bytes](std::string_view a) { bytes += a.size(); });
  ASSERT_TRUE(streamed.ok()) << streamed.status();
  EXPECT_EQ(streamed->audio_bytes, bytes);
  EXPECT_EQ(streamed->sample_rate, 24000);
  EXPECT_NEAR(*streamed->audio_seconds, bytes / 48000.0, 0.01);
}

TEST_F(GrpcTest, ListsAndChecksHealth) {
  auto client = MakeClient(TestOptions({server_->grpc_url()}));
  auto voices = client->ListVoices({.language = "en"});
  ASSERT_TRUE(voices.ok()) << voices.status();
  EXPECT_FALSE(voices->empty());
  auto models = client->ListModels();
  ASSERT_TRUE(models.ok()) << models.status();
  EXPECT_EQ(models->front().state, "ready");
  auto health = client->CheckHealth(HealthProbe::kReady);
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->http_status, 200);
}

TEST_F(GrpcTest, ErrorsMapToHttpEquivalentsAndAreNotRetried) {
  auto client = MakeClient(TestOptions({server_->grpc_url()}));
  SpeechRequest request = Hello();
  request.voice = "no-such-voice";
  CallInfo info;
  auto result = client->Synthesize(request, &info);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound) << result.status();
  EXPECT_EQ(ErrorInfoOf(result.status()).http_status, 404);
  EXPECT_EQ(info.attempts.size(), 1u);
}

TEST_F(GrpcTest, FailsOverFromRestToGrpc) {
  server_->SetFaults(R"({"fail_next": 10, "status": 503})");  // REST only: gRPC is not wrapped
  ClientOptions options = TestOptions({server_->url(), server_->grpc_url()});
  options.failover = Failover::kInOrder;
  CallInfo info;
  auto result = MakeClient(options)->Synthesize(Hello(), &info);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(info.attempts.size(), 2u);
  EXPECT_EQ(info.attempts[1].endpoint, server_->grpc_url());
}

}  // namespace
}  // namespace voxserve::client
