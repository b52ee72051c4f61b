#include "client/ws_transport.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/websocket/error.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <optional>

#include "absl/strings/numbers.h"
#include "client/blocking_steps.h"
#include "client/wav_header.h"
#include "client/ws_protocol.h"
#include "nlohmann/json.hpp"

namespace voxserve::client {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
using tcp = net::ip::tcp;

namespace {

// Input per text message. The server refuses messages over websocket.max_message_bytes (64 KiB
// by default) with 1009; JSON escaping can make text up to 6 times longer (\u00XX), so 8 KiB
// pieces always fit.
constexpr size_t kTextPieceBytes = 8 * 1024;
// An error answer to the upgrade is a short JSON object; more is not worth keeping.
constexpr size_t kMaxErrorBody = 64 * 1024;

// What REST would say for the same format: pcm is fixed at 24 kHz and Ogg Opus at 48 kHz; other
// rates arrive with the first segment_done.
int KnownSampleRate(std::string_view format) {
  if (format == "pcm") return 24000;
  if (format == "opus") return 48000;
  return 0;
}

bool ClosedUnderUs(const boost::system::error_code& ec) {
  return ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::ssl::error::stream_truncated ||
         ec == beast::http::error::end_of_stream || ec == beast::http::error::partial_message;
}

// The refused upgrade as REST's error answer.
Outcome RefusedUpgrade(const websocket::response_type& response) {
  Outcome outcome;
  outcome.kind = ErrorKind::kHttp;
  outcome.http_status = static_cast<int>(response.result_int());
  outcome.message = "HTTP " + std::to_string(outcome.http_status) + " to the WebSocket upgrade";
  int seconds = 0;
  if (absl::SimpleAtoi(std::string(response[beast::http::field::retry_after]), &seconds) &&
      seconds >= 0) {
    outcome.retry_after_seconds = seconds;
  }
  std::string body = response.body().substr(0, kMaxErrorBody);
  nlohmann::json parsed = nlohmann::json::parse(body, nullptr, false);
  if (parsed.is_object() && parsed.contains("error") && parsed["error"].is_object()) {
    const nlohmann::json& error = parsed["error"];
    auto text = [&error](const char* key) {
      return error.contains(key) && error[key].is_string() ? error[key].get<std::string>() : "";
    };
    outcome.type = text("type");
    outcome.code = text("code");
    outcome.param = text("param");
    if (std::string message = text("message"); !message.empty()) outcome.message += ": " + message;
  }
  return outcome;
}

// One speech stream over one connection, driven synchronously on the calling thread: each step
// runs the call's own io_context until it completes or the deadline passes (then the socket is
// closed and the call is over).
class WsCall {
  // Calls f with whichever websocket stream this call has.
  template <typename F>
  auto Visit(F&& f) {
    return secure_ ? f(*secure_) : f(*plain_);
  }
  tcp::socket& socket() {
    return secure_ ? secure_->next_layer().next_layer() : plain_->next_layer();
  }

  static Outcome ReadError(const boost::system::error_code& ec, const std::string& what) {
    if (ec == net::error::timed_out)
      return Outcome::Error(ErrorKind::kTimeout, "timed out waiting for " + what);
    if (ClosedUnderUs(ec)) {
      return Outcome::Error(ErrorKind::kConnectionLost,
                            "the connection was lost in " + what + " (" + ec.message() + ")");
    }
    if (ec.category() == net::error::get_ssl_category()) {
      // TLS 1.3 servers refuse a client certificate after the handshake: an alert on first read.
      return Outcome::Error(ErrorKind::kTls, "TLS error from the server: " + ec.message());
    }
    return Outcome::Error(ErrorKind::kProtocol, "bad answer in " + what + ": " + ec.message());
  }

  // One step to completion or until `deadline` (then the socket is closed).
  template <typename Start>
  boost::system::error_code Run(Deadline deadline, Start start) {
    return RunUntil(io_, deadline, start, [this] {
      boost::system::error_code ignored;
      socket().close(ignored);
    });
  }

 public:
  explicit WsCall(net::ssl::context* tls) {
    if (tls != nullptr) {
      secure_.emplace(io_, *tls);
    } else {
      plain_.emplace(io_);
    }
  }
  ~WsCall() {
    boost::system::error_code ignored;
    socket().close(ignored);
  }

  // TCP connect (every resolved address in turn) and the TLS handshake with SNI and host name
  // verification. Errors: kConnect (also its timeout), kTls.
  Outcome Connect(const Endpoint& endpoint, const std::string& server_name, bool verify_peer,
                  Deadline deadline) {
    return ConnectSocket(io_, socket(), secure_ ? &secure_->next_layer() : nullptr, endpoint,
                         server_name, verify_peer, deadline);
  }

  // The upgrade request with the API key, user agent and request id. Errors: the HTTP answer of
  // a refused upgrade (kHttp), kConnectionLost, kTimeout, kTls, kProtocol.
  Outcome Handshake(const std::string& host, const std::string& target, const std::string& api_key,
                    const std::string& user_agent, const std::string& request_id,
                    Deadline deadline) {
    websocket::response_type response;
    auto ec = Visit([&](auto& ws) {
      ws.set_option(websocket::stream_base::decorator([&](websocket::request_type& request) {
        request.set(beast::http::field::user_agent, user_agent);
        if (!api_key.empty()) request.set(beast::http::field::authorization, "Bearer " + api_key);
        if (!request_id.empty()) request.set("X-Request-Id", request_id);
      }));
      return Run(deadline,
                 [&](auto handler) { ws.async_handshake(response, host, target, handler); });
    });
    if (!ec) return {};
    if (ec == websocket::error::upgrade_declined && response.result_int() != 0) {
      return RefusedUpgrade(response);
    }
    return ReadError(ec, "the WebSocket upgrade");
  }

  Outcome Send(const std::string& message, Deadline deadline) {
    auto ec = Visit([&](auto& ws) {
      ws.text(true);
      return Run(deadline, [&](auto handler) { ws.async_write(net::buffer(message), handler); });
    });
    if (!ec) return {};
    if (ec == net::error::timed_out)
      return Outcome::Error(ErrorKind::kTimeout, "timed out sending the text");
    return Outcome::Error(ErrorKind::kConnectionLost,
                          "connection lost sending the text: " + ec.message());
  }

  // The next message: true with `binary` and `bytes` set, or false when the connection ended:
  // `*end` is then kNone after the server's close (its code in close_code()) or the error.
  bool Read(Deadline deadline, bool* binary, std::string* bytes, Outcome* end) {
    buffer_.consume(buffer_.size());
    auto ec = Visit([&](auto& ws) {
      return Run(deadline, [&](auto handler) { ws.async_read(buffer_, handler); });
    });
    if (ec == websocket::error::closed) {
      *end = {};
      Visit([this](auto& ws) {
        close_code_ = static_cast<int>(ws.reason().code);
        close_reason_ = std::string(ws.reason().reason.data(), ws.reason().reason.size());
        return 0;
      });
      return false;
    }
    if (ec) {
      *end = ReadError(ec, "the speech stream");
      return false;
    }
    *binary = Visit([](auto& ws) { return ws.got_binary(); });
    *bytes = beast::buffers_to_string(buffer_.data());
    return true;
  }

  int close_code() const { return close_code_; }
  const std::string& close_reason() const { return close_reason_; }

 private:
  net::io_context io_;
  std::optional<websocket::stream<tcp::socket>> plain_;
  std::optional<websocket::stream<net::ssl::stream<tcp::socket>>> secure_;
  beast::flat_buffer buffer_;
  int close_code_ = 0;
  std::string close_reason_;
};

Endpoint RestEndpoint(Endpoint endpoint) {
  endpoint.scheme = endpoint.tls() ? Scheme::kHttps : Scheme::kHttp;
  return endpoint;
}

}  // namespace

WsTransport::WsTransport(Endpoint endpoint, net::ssl::context* tls, const ClientOptions& options)
    : HttpTransport(RestEndpoint(endpoint), tls, options),
      endpoint_(std::move(endpoint)),
      tls_(tls),
      api_key_(options.api_key),
      user_agent_(options.user_agent),
      server_name_(options.tls.server_name),
      verify_peer_(options.tls.verify_peer),
      connect_timeout_(options.connect_timeout) {}

namespace {

// Holds a pcm stream back and hands it on as one WAV file once the call succeeded.
class PcmToWavSink final : public SpeechSink {
 public:
  explicit PcmToWavSink(SpeechSink& out) : out_(out) {}
  void OnHead(const std::string&, int sample_rate, const std::string& request_id) override {
    if (sample_rate > 0) sample_rate_ = sample_rate;
    request_id_ = request_id;
  }
  void OnAudio(std::string_view bytes) override { pcm_.append(bytes); }
  void OnAudioSeconds(double seconds) override { seconds_ = seconds; }
  void OnSampleRate(int sample_rate) override {
    if (sample_rate > 0) sample_rate_ = sample_rate;
  }
  void Finish() {
    out_.OnHead("audio/wav", sample_rate_, request_id_);
    out_.OnAudio(WavHeader(pcm_.size(), sample_rate_) + pcm_);
    if (seconds_) out_.OnAudioSeconds(*seconds_);
  }

 private:
  SpeechSink& out_;
  int sample_rate_ = KnownSampleRate("pcm");
  std::string request_id_;
  std::string pcm_;
  std::optional<double> seconds_;
};

}  // namespace

Outcome WsTransport::Synthesize(const SpeechRequest& request, Deadline deadline, SpeechSink& sink) {
  if (request.stream != StreamFormat::kNone || request.response_format == "pcm") {
    return Stream(request, deadline, sink);
  }
  if (request.response_format != "wav") return HttpTransport::Synthesize(request, deadline, sink);
  SpeechRequest pcm = request;
  pcm.response_format = "pcm";
  PcmToWavSink wav(sink);
  Outcome outcome = Stream(pcm, deadline, wav);
  if (outcome.ok()) wav.Finish();
  return outcome;
}

Outcome WsTransport::Stream(const SpeechRequest& request, Deadline deadline, SpeechSink& sink) {
  WsCall call(tls_);
  Outcome outcome = call.Connect(endpoint_, server_name_, verify_peer_,
                                 std::min(deadline, Clock::now() + connect_timeout_));
  if (outcome.ok()) {
    outcome = call.Handshake(endpoint_.HostHeader(),
                             endpoint_.path_prefix + std::string(kSpeechStreamPath), api_key_,
                             user_agent_, request.request_id, deadline);
  }
  if (!outcome.ok()) return outcome;

  // Everything goes at once: the server reads the next message only as it has room for more
  // sentences, and TCP holds the rest meanwhile. A failed send is reported by the reads below,
  // which may still find the server's reason (an error event) first.
  Outcome sent = call.Send(WsConfigMessage(request), deadline);
  for (const std::string& message : WsTextMessages(request.input, kTextPieceBytes)) {
    if (!sent.ok()) break;
    sent = call.Send(message, deadline);
  }
  if (sent.kind == ErrorKind::kTimeout) return sent;

  bool head = false, audio = false, done = false;
  std::optional<Outcome> error_event;
  auto send_head = [&](const std::string& format, const std::string& request_id) {
    if (head) return;
    head = true;
    sink.OnHead(WsContentType(format), KnownSampleRate(format), request_id);
  };
  bool binary = false;
  std::string bytes;
  Outcome end;
  while (call.Read(deadline, &binary, &bytes, &end)) {
    if (binary) {
      send_head(request.response_format, "");
      audio = audio || !bytes.empty();
      sink.OnAudio(bytes);
      continue;
    }
    std::optional<WsEvent> event = ParseWsEvent(bytes);
    if (!event) {
      return Outcome::Error(ErrorKind::kProtocol,
                            "the server sent a text message that is not a JSON event");
    }
    switch (event->type) {
      case WsEvent::Type::kReady:
        send_head(event->response_format.empty() ? request.response_format : event->response_format,
                  event->request_id);
        break;
      case WsEvent::Type::kSegmentDone:
        if (event->sample_rate > 0) sink.OnSampleRate(event->sample_rate);
        break;
      case WsEvent::Type::kDone:
        done = true;
        if (event->audio_seconds) sink.OnAudioSeconds(*event->audio_seconds);
        break;
      case WsEvent::Type::kError:
        if (!error_event) error_event = std::move(event->error);
        break;
      case WsEvent::Type::kOther:
        break;  // a newer server's event: nothing this client needs
    }
  }
  // Once audio has reached the sink an error is a broken stream, as SSE's error events are (the
  // server's status and fields stay in the outcome).
  auto after_audio = [audio](Outcome failure) {
    if (audio && failure.kind == ErrorKind::kHttp) failure.kind = ErrorKind::kStreamBroken;
    return failure;
  };
  if (error_event) return after_audio(*std::move(error_event));
  if (done) return {};  // whatever happened to the connection after `done`
  if (!end.ok()) return end;
  return after_audio(WsCloseOutcome(call.close_code(), call.close_reason()));
}

}  // namespace voxserve::client
