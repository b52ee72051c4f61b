// The same Client over voxserve's WebSocket speech stream (ws:// endpoints): audio that decodes,
// streamed in several pieces; errors answered as REST answers them and not retried; the API key
// on the upgrade request, a refused upgrade (429) retried. Close code 1013 and a 503 refusal,
// which a healthy server cannot be made to give on demand, come from a scripted peer.
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "client_test_support.h"

namespace voxserve::client {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = net::ip::tcp;

std::string WsUrl(const std::string& http_url) { return "ws" + http_url.substr(4); }

// Root mean square of 16-bit little-endian pcm, 0..1: speech is far above silence.
double Rms(const std::string& pcm) {
  double sum = 0;
  size_t samples = pcm.size() / 2;
  for (size_t i = 0; i < samples; ++i) {
    int16_t sample;
    std::memcpy(&sample, pcm.data() + 2 * i, 2);
    sum += static_cast<double>(sample) * sample;
  }
  return samples == 0 ? 0 : std::sqrt(sum / samples) / 32768.0;
}

using WsTest = FaultServerTest;

TEST_F(WsTest, SynthesizesPcmAndWavThatDecode) {
  auto client = MakeClient(TestOptions({WsUrl(server_->url())}));
  auto pcm = client->Synthesize(Hello("pcm"));
  ASSERT_TRUE(pcm.ok()) << pcm.status();
  EXPECT_EQ(pcm->content_type, "audio/pcm");
  EXPECT_EQ(pcm->sample_rate, 24000);
  EXPECT_FALSE(pcm->request_id.empty());
  EXPECT_EQ(pcm->audio_bytes, pcm->audio.size());
  EXPECT_EQ(pcm->audio.size() % 2, 0u);
  ASSERT_TRUE(pcm->audio_seconds.has_value());
  EXPECT_NEAR(*pcm->audio_seconds, pcm->audio.size() / 48000.0, 0.01);
  EXPECT_GT(*pcm->audio_seconds, 0.3);
  EXPECT_GT(Rms(pcm->audio), 0.01);

  auto wav = client->Synthesize(Hello("wav"));
  ASSERT_TRUE(wav.ok()) << wav.status();
  EXPECT_EQ(wav->audio.substr(0, 4), "RIFF");
  EXPECT_EQ(wav->content_type, "audio/wav");
  ASSERT_TRUE(wav->audio_seconds.has_value());
  EXPECT_NEAR(*wav->audio_seconds, *pcm->audio_seconds, 0.05);
}

TEST_F(WsTest, AWholeFileOfSeveralSentencesIsOneContainer) {
  auto client = MakeClient(TestOptions({WsUrl(server_->url())}));
  SpeechRequest request = Hello("wav");
  request.input = "One sentence. Another sentence. A third one.";
  auto wav = client->Synthesize(request);
  ASSERT_TRUE(wav.ok()) << wav.status();
  EXPECT_EQ(wav->audio.find("RIFF", 4), std::string::npos) << "one header per sentence";
  uint32_t data_bytes = 0;
  std::memcpy(&data_bytes, wav->audio.data() + 40, 4);
  EXPECT_EQ(data_bytes, wav->audio.size() - 44);
  request.response_format = "flac";  // over REST to the same host: the server encodes once
  auto flac = client->Synthesize(request);
  ASSERT_TRUE(flac.ok()) << flac.status();
  EXPECT_EQ(flac->audio.rfind("fLaC"), 0u);
}

TEST_F(WsTest, StreamsSeveralPiecesForSeveralSentencesAsRestWould) {
  auto client = MakeClient(TestOptions({WsUrl(server_->url())}));
  SpeechRequest request = Hello("pcm");
  request.input =
      "The first sentence is here. A second one follows it. Then comes a third. And a fourth "
      "one ends the text.";
  std::string audio;
  int pieces = 0;
  auto result = client->SynthesizeStream(request, [&](std::string_view bytes) {
    audio.append(bytes);
    ++pieces;
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_GE(pieces, 4) << "one or more audio messages per sentence";
  EXPECT_TRUE(result->audio.empty());
  EXPECT_EQ(result->audio_bytes, audio.size());
  EXPECT_GT(result->time_to_first_audio.count(), 0);
  EXPECT_LT(result->time_to_first_audio, result->total);
  EXPECT_GT(Rms(audio), 0.01);

  // The same text over REST: the same speech, to within a few milliseconds per sentence.
  auto rest = MakeClient(TestOptions({server_->url()}))->Synthesize(request);
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_NEAR(static_cast<double>(audio.size()), static_cast<double>(rest->audio.size()),
              0.1 * static_cast<double>(rest->audio.size()));
}

TEST_F(WsTest, ErrorsAreAnsweredAsRestAnswersThemAndNotRetried) {
  auto ws = MakeClient(TestOptions({WsUrl(server_->url())}));
  auto rest = MakeClient(TestOptions({server_->url()}));
  SpeechRequest bad_voice = Hello();
  bad_voice.voice = "no-such-voice";
  SpeechRequest bad_speed = Hello();
  bad_speed.speed = 9.0;  // outside 0.25 .. 4.0
  for (const SpeechRequest& request : {bad_voice, bad_speed}) {
    CallInfo info;
    auto over_ws = ws->Synthesize(request, &info);
    auto over_rest = rest->Synthesize(request);
    ASSERT_FALSE(over_ws.ok());
    EXPECT_EQ(over_ws.status().code(), over_rest.status().code()) << over_ws.status();
    ErrorInfo error = ErrorInfoOf(over_ws.status());
    EXPECT_EQ(error.kind, ErrorKind::kHttp);
    EXPECT_EQ(error.http_status, ErrorInfoOf(over_rest.status()).http_status);
    EXPECT_EQ(error.param, ErrorInfoOf(over_rest.status()).param);
    EXPECT_EQ(error.endpoint, WsUrl(server_->url()));
    EXPECT_EQ(info.attempts.size(), 1u);
  }
  auto speed = ws->Synthesize(bad_speed);
  EXPECT_EQ(speed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorInfoOf(speed.status()).param, "speed");
  auto voice = ws->Synthesize(bad_voice);
  EXPECT_TRUE(voice.status().code() == absl::StatusCode::kInvalidArgument ||
              voice.status().code() == absl::StatusCode::kNotFound)
      << voice.status();
}

TEST_F(WsTest, CatalogAndHealthGoOverRestToTheSameHost) {
  auto client = MakeClient(TestOptions({WsUrl(server_->url())}));
  auto voices = client->ListVoices({.language = "en"});
  ASSERT_TRUE(voices.ok()) << voices.status();
  EXPECT_FALSE(voices->empty());
  auto health = client->CheckHealth(HealthProbe::kReady);
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->http_status, 200);
}

TEST_F(WsTest, TimesOutAgainstAServerThatNeverAnswers) {
  net::io_context io;
  tcp::acceptor silent(io, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0));
  ClientOptions options =
      TestOptions({"ws://127.0.0.1:" + std::to_string(silent.local_endpoint().port())});
  options.attempt_timeout = milliseconds(300);
  options.retry.max_attempts = 1;
  Clock::time_point start = Clock::now();
  auto result = MakeClient(options)->Synthesize(Hello());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded) << result.status();
  EXPECT_LT(MillisBetween(start, Clock::now()), 1500);
}

// --- API keys and rate limits on the upgrade request, against a real server -------------------

constexpr char kApiKey[] = "sk-voxclient-ws-0123456789";

TEST(WsKeyTest, SendsTheKeyAndRetriesARateLimitedUpgrade) {
  namespace fs = std::filesystem;
  fs::path keys =
      fs::temp_directory_path() / ("voxclient-ws-keys-" + std::to_string(getpid()) + ".yaml");
  // One request a second, no burst: the second call at once is refused with 429 and Retry-After.
  std::ofstream(keys) << "keys:\n  - name: tester\n    key: \"" << kApiKey
                      << "\"\n    rate_limit: {requests_per_second: 1, burst: 1}\n";
  testing::VoxServeProcess server({"--api-keys-file", keys.string()});
  fs::remove(keys);
  ASSERT_TRUE(server.started()) << server.log();
  ClientOptions options = TestOptions({WsUrl(server.url())});

  CallInfo refused_info;
  auto refused = MakeClient(options)->Synthesize(Hello(), &refused_info);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated) << refused.status();
  EXPECT_EQ(ErrorInfoOf(refused.status()).http_status, 401);
  EXPECT_EQ(refused_info.attempts.size(), 1u);

  options.api_key = kApiKey;
  auto client = MakeClient(options);
  auto first = client->Synthesize(Hello());
  ASSERT_TRUE(first.ok()) << first.status();
  CallInfo info;
  auto second = client->Synthesize(Hello(), &info);
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(info.attempts.size(), 2u);
  EXPECT_EQ(info.attempts[0].http_status, 429);
  EXPECT_EQ(info.attempts[0].status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_GT(second->audio_bytes, 1000u);
}

// --- A scripted peer: what the real server only does under load or while shutting down -------

// Serves one connection per step of its script, in order, on a thread of its own.
class ScriptedWsServer {
 public:
  enum class Step {
    kRefuse503,       // answers the upgrade with HTTP 503 and Retry-After: 0
    kClose1013,       // accepts, reads the config and text, closes with 1013 (queue full)
    kSpeak,           // accepts, reads the config and text, sends ready, audio, done, closes 1000
    kAudioThenError,  // as kSpeak, but an error event (503) and 1013 follow the audio
  };
  explicit ScriptedWsServer(std::vector<Step> script)
      : acceptor_(io_, tcp::endpoint(net::ip::make_address("127.0.0.1"), 0)),
        thread_([this, script = std::move(script)] {
          for (Step step : script) Serve(step);
        }) {}
  ~ScriptedWsServer() { Join(); }
  // The script is played: its records may be read.
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

  std::string url() const {
    return "ws://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  // The Authorization header of each upgrade request, and the text messages after the config.
  std::vector<std::string> authorizations, texts;

 private:
  void Serve(Step step) {
    tcp::socket socket(io_);
    acceptor_.accept(socket);
    beast::flat_buffer buffer;
    beast::http::request<beast::http::string_body> request;
    beast::http::read(socket, buffer, request);
    authorizations.push_back(std::string(request[beast::http::field::authorization]));
    if (step == Step::kRefuse503) {
      beast::http::response<beast::http::string_body> response(
          beast::http::status::service_unavailable, 11);
      response.set(beast::http::field::content_type, "application/json");
      response.set(beast::http::field::retry_after, "0");
      response.body() =
          R"({"error":{"message":"not ready","type":"server_error","code":"not_ready"}})";
      response.prepare_payload();
      beast::http::write(socket, response);
      return;
    }
    websocket::stream<tcp::socket> ws(std::move(socket));
    ws.accept(request);
    beast::flat_buffer message;
    ws.read(message);  // the config
    message.clear();
    ws.read(message);  // {"text": ..., "close": true}
    texts.push_back(beast::buffers_to_string(message.data()));
    if (step == Step::kClose1013) {
      ws.close(websocket::close_reason(websocket::close_code::try_again_later, "queue full"));
    } else {
      ws.text(true);
      ws.write(net::buffer(
          std::string(R"({"type":"ready","request_id":"scripted","response_format":"pcm"})")));
      ws.binary(true);
      ws.write(net::buffer(std::string(4800, '\x10')));
      ws.text(true);
      if (step == Step::kSpeak) {
        ws.write(net::buffer(std::string(R"({"type":"done","usage":{"audio_seconds":0.1}})")));
        ws.close(websocket::close_code::normal);
      } else {
        ws.write(net::buffer(std::string(
            R"({"type":"error","status":503,"error":{"message":"model unloaded","code":"gone"}})")));
        ws.close(websocket::close_reason(websocket::close_code::try_again_later, "unloaded"));
      }
    }
    // The client answers the close; read until Beast reports the handshake done.
    beast::error_code ec;
    while (!ec) ws.read(message, ec);
  }

  net::io_context io_;
  tcp::acceptor acceptor_;
  std::thread thread_;
};

TEST(WsScriptedTest, RetriesA1013CloseAndA503RefusalBeforeAnyAudio) {
  using Step = ScriptedWsServer::Step;
  ScriptedWsServer peer({Step::kClose1013, Step::kRefuse503, Step::kSpeak});
  ClientOptions options = TestOptions({peer.url()});
  options.api_key = "sk-scripted";
  CallInfo info;
  auto result = MakeClient(options)->Synthesize(Hello(), &info);
  peer.Join();
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(info.attempts.size(), 3u);
  EXPECT_EQ(info.attempts[0].status.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(info.attempts[0].status.message().find("1013"), std::string::npos)
      << info.attempts[0].status;
  EXPECT_EQ(info.attempts[1].http_status, 503);
  EXPECT_EQ(ErrorInfoOf(info.attempts[1].status).code, "not_ready");
  EXPECT_EQ(result->audio_bytes, 4800u);
  EXPECT_EQ(result->request_id, "scripted");
  ASSERT_TRUE(result->audio_seconds.has_value());
  EXPECT_NEAR(*result->audio_seconds, 0.1, 1e-6);  // 4800 pcm bytes at 24 kHz
  ASSERT_EQ(peer.authorizations.size(), 3u);
  for (const std::string& authorization : peer.authorizations) {
    EXPECT_EQ(authorization, "Bearer sk-scripted");
  }
  ASSERT_EQ(peer.texts.size(), 2u);  // the refused upgrade carried none
  for (const std::string& text : peer.texts) {
    EXPECT_EQ(text, R"({"close":true,"text":"Hello there."})");
  }
}

TEST(WsScriptedTest, AnErrorAfterAudioIsABrokenStreamAndNeverRetried) {
  using Step = ScriptedWsServer::Step;
  ScriptedWsServer peer({Step::kAudioThenError});
  size_t received = 0;
  CallInfo info;
  auto result =
      MakeClient(TestOptions({peer.url()}))
          ->SynthesizeStream(
              Hello(), [&received](std::string_view audio) { received += audio.size(); }, &info);
  peer.Join();
  ASSERT_FALSE(result.ok());
  ErrorInfo error = ErrorInfoOf(result.status());
  EXPECT_EQ(error.kind, ErrorKind::kStreamBroken) << result.status();
  EXPECT_EQ(error.code, "gone");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(received, 4800u);
  EXPECT_EQ(info.attempts.size(), 1u);
}

}  // namespace
}  // namespace voxserve::client
