// The small parsers of the client: endpoint URLs, server-sent events, audio durations, errors.
#include <gtest/gtest.h>

#include "client/audio_duration.h"
#include "client/client_error.h"
#include "client/endpoint.h"
#include "client/sse_parser.h"
#include "client/wav_header.h"
#include "client/wyoming_transport.h"

namespace voxserve::client {
namespace {

TEST(EndpointTest, ParsesSchemesPortsAndPrefixes) {
  auto plain = ParseEndpoint("http://127.0.0.1:8080");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->host, "127.0.0.1");
  EXPECT_EQ(plain->port, "8080");
  EXPECT_FALSE(plain->tls());
  auto secure = ParseEndpoint("https://tts.example/api/");
  ASSERT_TRUE(secure.ok());
  EXPECT_EQ(secure->port, "443");
  EXPECT_EQ(secure->path_prefix, "/api");
  EXPECT_TRUE(secure->tls());
  auto v6 = ParseEndpoint("http://[::1]:9000");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->HostHeader(), "[::1]:9000");
  EXPECT_EQ(ParseEndpoint("grpc://h")->port, "50051");
  auto wyoming = ParseEndpoint("wyoming://homeassistant.local");
  ASSERT_TRUE(wyoming.ok());
  EXPECT_EQ(wyoming->scheme, Scheme::kWyoming);
  EXPECT_EQ(wyoming->port, "10200") << "Home Assistant's usual TTS port";
  EXPECT_FALSE(wyoming->tls());
}

TEST(WyomingTransportTest, ErrorCodesReadAsTheStatusRestWouldAnswer) {
  EXPECT_EQ(WyomingTransport::HttpStatusForCode("voice_not_found"), 404);
  EXPECT_EQ(WyomingTransport::HttpStatusForCode("empty_input"), 400);
  EXPECT_EQ(WyomingTransport::HttpStatusForCode("queue_full"), 429);  // retried, as REST's 429
  EXPECT_EQ(WyomingTransport::HttpStatusForCode("server_draining"), 503);
  EXPECT_EQ(WyomingTransport::HttpStatusForCode("something_new"), 500);
}

TEST(WavHeaderTest, Describes16BitMonoPcmOfAKnownOrUnknownLength) {
  const std::string header = WavHeader(1000, 22050);
  ASSERT_EQ(header.size(), 44u);
  EXPECT_EQ(header.substr(0, 4), "RIFF");
  auto u32 = [&header](size_t at) {
    uint32_t value = 0;
    for (int i = 3; i >= 0; --i) value = value << 8 | static_cast<unsigned char>(header[at + i]);
    return value;
  };
  EXPECT_EQ(u32(4), 1036u);
  EXPECT_EQ(u32(24), 22050u);
  EXPECT_EQ(u32(40), 1000u);
  const std::string streamed = WavHeader(kUnknownWavLength, 16000);
  EXPECT_EQ(streamed.size(), 44u);
  EXPECT_EQ(streamed.substr(40, 4), std::string(4, '\xff'));
}

TEST(EndpointTest, RejectsWhatItCannotUse) {
  for (const char* url : {"127.0.0.1:8080", "ftp://h", "http://", "http://h:0", "http://h:99999",
                          "http://u@h", "http://h/?q=1", "http://[::1"}) {
    EXPECT_FALSE(ParseEndpoint(url).ok()) << url;
  }
}

TEST(SseParserTest, SplitsEventsAcrossArbitraryCuts) {
  std::string stream =
      "data: {\"a\":1}\n\n: comment\r\nevent: x\r\ndata: line1\r\ndata: line2\r\n\r\ndata:x\n\n";
  for (size_t cut = 1; cut < stream.size(); ++cut) {
    std::vector<std::string> events;
    SseParser parser([&events](const std::string& data) { events.push_back(data); });
    parser.Feed(stream.substr(0, cut));
    parser.Feed(stream.substr(cut));
    ASSERT_EQ(events.size(), 3u) << "cut at " << cut;
    EXPECT_EQ(events[0], "{\"a\":1}");
    EXPECT_EQ(events[1], "line1\nline2");
    EXPECT_EQ(events[2], "x");
  }
}

std::string Le(uint32_t value, int bytes) {
  std::string out;
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
  return out;
}

// A 16-bit mono WAV header at `rate` with an extra LIST chunk before the data.
std::string WavHeader(uint32_t rate, uint32_t data_size) {
  std::string fmt = Le(1, 2) + Le(1, 2) + Le(rate, 4) + Le(rate * 2, 4) + Le(2, 2) + Le(16, 2);
  return "RIFF" + Le(0xFFFFFFFF, 4) + "WAVE" + "fmt " + Le(16, 4) + fmt + "LIST" + Le(3, 4) +
         "abc" + std::string(1, '\0') + "data" + Le(data_size, 4);
}

TEST(AudioDurationTest, CountsPcmFromBytesAndRate) {
  AudioDurationCounter counter("pcm", 24000);
  counter.Add(std::string(48000, '\0'));
  counter.Add(std::string(24000, '\0'));
  EXPECT_DOUBLE_EQ(*counter.seconds(), 1.5);
  AudioDurationCounter unknown_rate("pcm", 0);  // taken as 24 kHz
  unknown_rate.Add(std::string(4800, '\0'));
  EXPECT_DOUBLE_EQ(*unknown_rate.seconds(), 0.1);
}

TEST(AudioDurationTest, CountsWavDataBytesWhateverTheCuts) {
  std::string file = WavHeader(22050, 0xFFFFFFFF) + std::string(22050 * 2 * 2, '\0');  // 2 s
  for (size_t cut : {1ul, 10ul, 40ul, 57ul, 1000ul}) {
    AudioDurationCounter counter("wav", 0);
    for (size_t at = 0; at < file.size(); at += cut) counter.Add(file.substr(at, cut));
    ASSERT_TRUE(counter.seconds().has_value()) << cut;
    EXPECT_DOUBLE_EQ(*counter.seconds(), 2.0) << cut;
  }
}

TEST(AudioDurationTest, HasNoAnswerForCompressedFormats) {
  AudioDurationCounter counter("mp3", 24000);
  counter.Add("ID3....");
  EXPECT_FALSE(counter.seconds().has_value());
}

TEST(ClientErrorTest, RoundTripsErrorInfoThroughTheStatus) {
  ErrorInfo info{ErrorKind::kHttp, 429, "rate_limit_error", "queue_full", "", 3, "http://h:1"};
  absl::Status status = MakeError(StatusCodeForHttp(429), "busy", info);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  ErrorInfo back = ErrorInfoOf(status);
  EXPECT_EQ(back.kind, ErrorKind::kHttp);
  EXPECT_EQ(back.http_status, 429);
  EXPECT_EQ(back.code, "queue_full");
  EXPECT_EQ(back.retry_after_seconds, 3);
  EXPECT_EQ(back.endpoint, "http://h:1");
  EXPECT_EQ(ErrorInfoOf(absl::InternalError("x")).kind, ErrorKind::kNone);
}

TEST(ClientErrorTest, MapsHttpStatusesLikeGrpc) {
  EXPECT_EQ(StatusCodeForHttp(400), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StatusCodeForHttp(401), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(StatusCodeForHttp(404), absl::StatusCode::kNotFound);
  EXPECT_EQ(StatusCodeForHttp(503), absl::StatusCode::kUnavailable);
  EXPECT_EQ(StatusCodeForHttp(504), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(StatusCodeForHttp(500), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace voxserve::client
