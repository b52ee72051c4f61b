#include "transport/http/http_synthesis_sink.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "core/error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace voxserve::transport::http {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::optional<std::string> HeaderOf(const HttpResponse& response, const std::string& name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

// Records what the sink asks of the connection, in order. Single-threaded: the tests call the
// sink directly, as the service would from one thread.
class RecordingExchange final : public HttpExchange {
 public:
  const HttpRequest& request() const override { return request_; }
  const std::string& request_id() const override { return request_id_; }

  void Respond(HttpResponse response) override {
    calls.push_back("Respond");
    responses.push_back(std::move(response));
  }
  void StartStream(HttpResponse head) override {
    calls.push_back("StartStream");
    heads.push_back(std::move(head));
  }
  void WriteStream(std::string bytes) override {
    calls.push_back("WriteStream");
    writes.push_back(std::move(bytes));
  }
  void EndStream() override { calls.push_back("EndStream"); }
  void AbortStream() override { calls.push_back("AbortStream"); }
  size_t BufferedBytes() const override { return buffered_bytes; }
  void OnDrained(std::function<void()>) override {}
  void OnClientGone(std::function<void()>) override {}
  const auth::AuthResult& auth() const override { return auth_; }
  void AnnotateLog(std::function<void(core::RequestLogEntry&)> annotate) override {
    annotate(log);
  }

  std::vector<std::string> calls;
  core::RequestLogEntry log;
  std::vector<HttpResponse> responses;
  std::vector<HttpResponse> heads;
  std::vector<std::string> writes;
  size_t buffered_bytes = 0;

 private:
  HttpRequest request_;
  std::string request_id_ = "req-1";
  auth::AuthResult auth_;
};

// The payload of one server-sent event `data: {...}\n\n`; fails the test if the framing is off.
json SseData(const std::string& event) {
  const std::string prefix = "data: ";
  const std::string suffix = "\n\n";
  EXPECT_EQ(event.compare(0, prefix.size(), prefix), 0) << event;
  EXPECT_GE(event.size(), prefix.size() + suffix.size()) << event;
  EXPECT_EQ(event.compare(event.size() - suffix.size(), suffix.size(), suffix), 0) << event;
  std::string payload = event.substr(prefix.size(), event.size() - prefix.size() - suffix.size());
  EXPECT_EQ(payload.find('\n'), std::string::npos) << "an event's data must be one line";
  return json::parse(payload);
}

class HttpSynthesisSinkTest : public ::testing::Test {
 protected:
  std::shared_ptr<RecordingExchange> exchange_ = std::make_shared<RecordingExchange>();
  service::SynthesisSummary summary_;
};

// ---- one complete response ----

TEST_F(HttpSynthesisSinkTest, NonStreamingCollectsAudioAndRespondsOnceAtCompletion) {
  HttpSynthesisSink sink(exchange_, StreamMode::kNone, audio::AudioFormat::kWav);
  sink.OnStart(22050);
  sink.OnAudio("RIFF");
  sink.OnAudio("data");
  EXPECT_THAT(exchange_->calls, IsEmpty());
  sink.OnComplete(absl::OkStatus(), summary_);
  ASSERT_THAT(exchange_->calls, ElementsAre("Respond"));
  EXPECT_EQ(exchange_->responses[0].status, 200);
  EXPECT_EQ(exchange_->responses[0].body, "RIFFdata");
}

TEST_F(HttpSynthesisSinkTest, NonStreamingResponseNamesTheFormatsContentType) {
  HttpSynthesisSink sink(exchange_, StreamMode::kNone, audio::AudioFormat::kMp3);
  sink.OnStart(24000);
  sink.OnAudio("ID3");
  sink.OnComplete(absl::OkStatus(), summary_);
  ASSERT_EQ(exchange_->responses.size(), 1u);
  EXPECT_EQ(HeaderOf(exchange_->responses[0], "Content-Type"), "audio/mpeg");
}

TEST_F(HttpSynthesisSinkTest, NonStreamingResponseCarriesTheRateFromOnStart) {
  HttpSynthesisSink sink(exchange_, StreamMode::kNone, audio::AudioFormat::kPcm);
  sink.OnStart(24000);
  sink.OnAudio(std::string(4, '\0'));
  sink.OnComplete(absl::OkStatus(), summary_);
  ASSERT_EQ(exchange_->responses.size(), 1u);
  EXPECT_EQ(HeaderOf(exchange_->responses[0], "X-Sample-Rate"), "24000");
}

TEST_F(HttpSynthesisSinkTest, TheCacheResultBecomesXCacheOnFilesAndStreams) {
  HttpSynthesisSink file(exchange_, StreamMode::kNone, audio::AudioFormat::kWav);
  file.OnCacheResult(service::CacheResult::kHit);
  file.OnStart(22050);
  file.OnAudio("RIFF");
  file.OnComplete(absl::OkStatus(), summary_);
  ASSERT_EQ(exchange_->responses.size(), 1u);
  EXPECT_EQ(HeaderOf(exchange_->responses[0], "X-Cache"), "hit");

  HttpSynthesisSink stream(exchange_, StreamMode::kAudio, audio::AudioFormat::kPcm);
  stream.OnCacheResult(service::CacheResult::kMiss);
  stream.OnStart(22050);
  stream.OnAudio("pcm");
  ASSERT_EQ(exchange_->heads.size(), 1u);
  EXPECT_EQ(HeaderOf(exchange_->heads[0], "X-Cache"), "miss");

  HttpSynthesisSink off(exchange_, StreamMode::kSse, audio::AudioFormat::kPcm);
  off.OnCacheResult(service::CacheResult::kOff);
  off.OnStart(22050);
  off.OnAudio("pcm");
  ASSERT_EQ(exchange_->heads.size(), 2u);
  EXPECT_EQ(HeaderOf(exchange_->heads[1], "X-Cache"), std::nullopt);
}

TEST_F(HttpSynthesisSinkTest, NonStreamingErrorRespondsWithTheMappedStatus) {
  HttpSynthesisSink sink(exchange_, StreamMode::kNone, audio::AudioFormat::kWav);
  sink.OnComplete(core::NotFound("no voice 'x'", "voice", "voice_not_found"), summary_);
  ASSERT_THAT(exchange_->calls, ElementsAre("Respond"));
  EXPECT_EQ(exchange_->responses[0].status, 404);
  EXPECT_EQ(json::parse(exchange_->responses[0].body)["error"]["param"], "voice");
}

TEST_F(HttpSynthesisSinkTest, NonStreamingErrorAfterAudioStillRespondsWithTheError) {
  HttpSynthesisSink sink(exchange_, StreamMode::kNone, audio::AudioFormat::kWav);
  sink.OnStart(22050);
  sink.OnAudio("partial");
  sink.OnComplete(absl::DeadlineExceededError("too slow"), summary_);
  ASSERT_THAT(exchange_->calls, ElementsAre("Respond"));
  EXPECT_EQ(exchange_->responses[0].status, 504);
}

// ---- chunked audio ----

TEST_F(HttpSynthesisSinkTest, AudioStreamStartsOnFirstAudioWithHeaders) {
  HttpSynthesisSink sink(exchange_, StreamMode::kAudio, audio::AudioFormat::kPcm);
  sink.OnStart(24000);
  EXPECT_THAT(exchange_->calls, IsEmpty());
  sink.OnAudio("ab");
  ASSERT_THAT(exchange_->calls, ElementsAre("StartStream", "WriteStream"));
  EXPECT_EQ(exchange_->heads[0].status, 200);
  EXPECT_EQ(HeaderOf(exchange_->heads[0], "Content-Type"), "audio/pcm");
  EXPECT_EQ(HeaderOf(exchange_->heads[0], "X-Sample-Rate"), "24000");
}

TEST_F(HttpSynthesisSinkTest, AudioStreamWritesBytesInOrderThenEnds) {
  HttpSynthesisSink sink(exchange_, StreamMode::kAudio, audio::AudioFormat::kMp3);
  sink.OnStart(24000);
  sink.OnAudio("one");
  sink.OnAudio("two");
  sink.OnComplete(absl::OkStatus(), summary_);
  EXPECT_THAT(exchange_->calls,
              ElementsAre("StartStream", "WriteStream", "WriteStream", "EndStream"));
  EXPECT_THAT(exchange_->writes, ElementsAre("one", "two"));
}

TEST_F(HttpSynthesisSinkTest, AudioStreamWithNoAudioStillSendsHeadersAndEnds) {
  HttpSynthesisSink sink(exchange_, StreamMode::kAudio, audio::AudioFormat::kMp3);
  sink.OnStart(24000);
  sink.OnComplete(absl::OkStatus(), summary_);
  EXPECT_THAT(exchange_->calls, ElementsAre("StartStream", "EndStream"));
}

TEST_F(HttpSynthesisSinkTest, AudioStreamErrorBeforeAudioRespondsWithTheMappedStatus) {
  HttpSynthesisSink sink(exchange_, StreamMode::kAudio, audio::AudioFormat::kMp3);
  sink.OnComplete(core::QueueFull("queue is full", 2), summary_);
  ASSERT_THAT(exchange_->calls, ElementsAre("Respond"));
  EXPECT_EQ(exchange_->responses[0].status, 429);
  EXPECT_EQ(HeaderOf(exchange_->responses[0], "Retry-After"), "2");
}

TEST_F(HttpSynthesisSinkTest, AudioStreamErrorAfterAudioAbortsTheStream) {
  HttpSynthesisSink sink(exchange_, StreamMode::kAudio, audio::AudioFormat::kMp3);
  sink.OnStart(24000);
  sink.OnAudio("frame");
  sink.OnComplete(core::Internal("engine failed"), summary_);
  EXPECT_THAT(exchange_->calls, ElementsAre("StartStream", "WriteStream", "AbortStream"));
}

// ---- server-sent events ----

TEST_F(HttpSynthesisSinkTest, SseStreamIsAnEventStream) {
  HttpSynthesisSink sink(exchange_, StreamMode::kSse, audio::AudioFormat::kPcm);
  sink.OnStart(24000);
  sink.OnAudio("x");
  ASSERT_EQ(exchange_->heads.size(), 1u);
  EXPECT_EQ(HeaderOf(exchange_->heads[0], "Content-Type"), "text/event-stream");
  EXPECT_EQ(HeaderOf(exchange_->heads[0], "Cache-Control"), "no-cache");
}

TEST_F(HttpSynthesisSinkTest, SseDeltaCarriesBase64AudioThatDecodesToTheBytes) {
  const std::string bytes("\x00\x01\xFE\xFF pcm", 8);
  HttpSynthesisSink sink(exchange_, StreamMode::kSse, audio::AudioFormat::kPcm);
  sink.OnStart(24000);
  sink.OnAudio(bytes);
  ASSERT_EQ(exchange_->writes.size(), 1u);
  json delta = SseData(exchange_->writes[0]);
  EXPECT_EQ(delta["type"], "speech.audio.delta");
  std::string decoded;
  ASSERT_TRUE(absl::Base64Unescape(delta["audio"].get<std::string>(), &decoded));
  EXPECT_EQ(decoded, bytes);
}

TEST_F(HttpSynthesisSinkTest, SseEndsWithDoneEventCarryingUsage) {
  summary_.input_chars = 12;
  summary_.audio_seconds = 1.5;
  HttpSynthesisSink sink(exchange_, StreamMode::kSse, audio::AudioFormat::kPcm);
  sink.OnStart(24000);
  sink.OnAudio("a");
  sink.OnAudio("b");
  sink.OnComplete(absl::OkStatus(), summary_);
  EXPECT_THAT(exchange_->calls,
              ElementsAre("StartStream", "WriteStream", "WriteStream", "WriteStream", "EndStream"));
  ASSERT_EQ(exchange_->writes.size(), 3u);
  json done = SseData(exchange_->writes[2]);
  EXPECT_EQ(done["type"], "speech.audio.done");
  EXPECT_EQ(done["usage"]["input_tokens"], 12);
  EXPECT_EQ(done["usage"]["output_tokens"], 1500);
  EXPECT_EQ(done["usage"]["total_tokens"], 1512);
}

TEST_F(HttpSynthesisSinkTest, SseErrorBeforeAudioRespondsWithTheMappedStatus) {
  HttpSynthesisSink sink(exchange_, StreamMode::kSse, audio::AudioFormat::kPcm);
  sink.OnComplete(core::Draining("shutting down"), summary_);
  ASSERT_THAT(exchange_->calls, ElementsAre("Respond"));
  EXPECT_EQ(exchange_->responses[0].status, 503);
}

TEST_F(HttpSynthesisSinkTest, SseErrorAfterAudioSendsAnErrorEventThenEnds) {
  HttpSynthesisSink sink(exchange_, StreamMode::kSse, audio::AudioFormat::kPcm);
  sink.OnStart(24000);
  sink.OnAudio("a");
  sink.OnComplete(absl::DeadlineExceededError("request timed out"), summary_);
  EXPECT_THAT(exchange_->calls,
              ElementsAre("StartStream", "WriteStream", "WriteStream", "EndStream"));
  ASSERT_EQ(exchange_->writes.size(), 2u);
  json error = SseData(exchange_->writes[1]);
  EXPECT_EQ(error["type"], "error");
  EXPECT_EQ(error["error"]["message"], "request timed out");
  EXPECT_EQ(error["error"]["type"], "timeout_error");
}

TEST_F(HttpSynthesisSinkTest, BufferedBytesAreTheExchanges) {
  HttpSynthesisSink sink(exchange_, StreamMode::kAudio, audio::AudioFormat::kPcm);
  exchange_->buffered_bytes = 4096;
  EXPECT_EQ(sink.BufferedBytes(), 4096u);
}

TEST_F(HttpSynthesisSinkTest, CompletionFillsTheLogLineAndFreesTheCallersSlot) {
  auto limiter = std::make_shared<auth::KeyLimiter>();
  limiter->Configure(std::nullopt, 1);
  int retry_after = 0;
  bool concurrency = false;
  ASSERT_TRUE(limiter->TryAcquire(auth::LimiterClock::now(), &retry_after, &concurrency));
  HttpSynthesisSink sink(exchange_, StreamMode::kNone, audio::AudioFormat::kWav,
                         auth::Admission(limiter));
  summary_.model = "espeak";
  summary_.voice = "en-us";
  summary_.input_chars = 12;
  summary_.audio_seconds = 1.5;
  summary_.time_to_first_audio_seconds = 0.02;
  EXPECT_EQ(limiter->in_flight(), 1);
  sink.OnComplete(absl::OkStatus(), summary_);
  EXPECT_EQ(limiter->in_flight(), 0);
  EXPECT_EQ(exchange_->log.model, "espeak");
  EXPECT_EQ(exchange_->log.voice, "en-us");
  EXPECT_EQ(exchange_->log.chars, 12u);
  EXPECT_EQ(exchange_->log.audio_seconds, 1.5);
  EXPECT_EQ(exchange_->log.time_to_first_audio_seconds, 0.02);
}

}  // namespace
}  // namespace voxserve::transport::http
