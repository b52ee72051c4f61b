// Raw bytes from a client through the real HTTP stack: HttpServer's sessions (Beast's parser with
// our limits, request conversion, routing, WebSocket upgrades and frames) and the real REST and
// WebSocket handlers over a TtsService whose engine returns silence. One connection per input:
// the bytes are sent, the write side closed, and every answer read until the server closes; a
// server that neither answers nor closes within kHangSeconds is a hang and aborts.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <memory>

#include <spdlog/spdlog.h>

#include "core/metrics.h"
#include "service/tts_service.h"
#include "transport/http/http_server.h"
#include "transport/http/info_handlers.h"
#include "transport/http/speech_handlers.h"
#include "transport/websocket/websocket_endpoint.h"

namespace {

using namespace voxserve;

constexpr int kHangSeconds = 8;

// Silence, one sample per byte of text: the fuzzer is after the transport, not audio.
class SilentEngine : public engine::Engine {
 public:
  SilentEngine() {
    info_.id = "fake";
    info_.engine = "fake";
    info_.voices.push_back({"alice", "en-us", 16000, "silent voice"});
    info_.default_voice = "alice";
  }
  const engine::ModelInfo& info() const override { return info_; }
  bool AcceptsVoice(std::string_view voice_id) const override { return voice_id == "alice"; }
  absl::Status Warmup(std::span<const std::string>) override { return absl::OkStatus(); }
  std::vector<absl::StatusOr<audio::PcmAudio>> Synthesize(
      std::span<const engine::SegmentInput> batch) override {
    std::vector<absl::StatusOr<audio::PcmAudio>> results;
    for (const engine::SegmentInput& input : batch) {
      results.push_back(audio::PcmAudio{std::vector<float>(input.text.size(), 0.0f), 16000});
    }
    return results;
  }

 private:
  engine::ModelInfo info_;
};

// Built once, never destroyed (libFuzzer exits without unwinding; the I/O threads run to the end).
struct Server {
  core::MetricsRegistry metrics;
  std::unique_ptr<service::TtsService> service;
  std::unique_ptr<transport::http::HttpMetrics> http_metrics;
  transport::http::Router router;
  transport::http::ServerIdentity identity{"fuzz"};
  transport::http::HttpConfig http;
  transport::websocket::WebSocketConfig websocket;
  std::unique_ptr<transport::websocket::WebSocketEndpoint> endpoint;
  std::unique_ptr<transport::http::HttpServer> server;
};

Server* StartServer() {
  auto* s = new Server;
  service::ServiceConfig config;
  service::ModelConfig model;
  model.engine.model_id = "fake";
  model.engine.engine = "fake";
  config.models.push_back(model);
  config.openai_voices["alloy"] = "alice";
  config.encode_threads = 1;
  auto service = service::TtsService::Create(
      config, s->metrics,
      [](const engine::EngineSpec&) -> absl::StatusOr<std::unique_ptr<engine::Engine>> {
        return std::make_unique<SilentEngine>();
      });
  if (!service.ok() || !(*service)->LoadModels().ok()) {
    std::fprintf(stderr, "http_session_fuzzer: the service did not start\n");
    std::abort();
  }
  s->service = std::move(*service);
  s->http_metrics = std::make_unique<transport::http::HttpMetrics>(s->metrics);
  transport::http::AddSpeechRoutes(s->router, *s->service);
  transport::http::AddInfoRoutes(s->router, *s->service, s->metrics, s->identity);
  transport::websocket::AddSpeechStreamRoute(s->router);
  s->http.port = 0;
  s->http.io_threads = 2;
  s->endpoint = std::make_unique<transport::websocket::WebSocketEndpoint>(
      s->websocket, s->http, *s->service, s->metrics, *s->http_metrics);
  auto server = transport::http::HttpServer::Create(s->http, s->router, *s->http_metrics, {},
                                                    s->endpoint.get());
  if (!server.ok()) {
    std::fprintf(stderr, "http_session_fuzzer: %s\n", server.status().ToString().c_str());
    std::abort();
  }
  s->server = std::move(*server);
  s->server->Start();
  return s;
}

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    std::perror("http_session_fuzzer: connect");
    std::abort();
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return fd;
}

// Writes `data` while reading whatever comes back (so neither side can block the other), then
// half-closes and reads until the server closes.
void Exchange(int fd, const uint8_t* data, size_t size) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(kHangSeconds);
  size_t sent = 0;
  bool write_closed = false;
  char discard[16384];
  while (true) {
    if (sent == size && !write_closed) {
      shutdown(fd, SHUT_WR);
      write_closed = true;
    }
    pollfd poll_fd{fd, static_cast<short>(POLLIN | (write_closed ? 0 : POLLOUT)), 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        give_up - std::chrono::steady_clock::now());
    if (left.count() <= 0 || poll(&poll_fd, 1, static_cast<int>(left.count())) == 0) {
      std::fprintf(stderr, "http_session_fuzzer: no answer and no close in %d s\n", kHangSeconds);
      std::abort();
    }
    if (poll_fd.revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t got = recv(fd, discard, sizeof discard, 0);
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) return;  // closed / reset
    }
    if (!write_closed && (poll_fd.revents & POLLOUT)) {
      ssize_t wrote = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
      if (wrote > 0) {
        sent += static_cast<size_t>(wrote);
      } else if (errno != EAGAIN && errno != EINTR) {
        sent = size;  // the server closed its side: keep reading what it said
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // one log line per request would drown the fuzzer
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server* server = StartServer();
  int fd = Connect(server->server->port());
  Exchange(fd, data, size);
  close(fd);
  return 0;
}
