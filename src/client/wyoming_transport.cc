#include "client/wyoming_transport.h"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "client/blocking_steps.h"
#include "client/wav_header.h"
#include "transport/wyoming/wyoming_frame.h"

namespace voxserve::client {
namespace net = boost::asio;
using tcp = net::ip::tcp;
using nlohmann::json;
namespace wyoming = transport::wyoming;

namespace {

// A server's info lists every voice (voxserve's espeak-ng model alone has over a hundred), and
// another server may send larger audio chunks than voxserve's 2 KiB: generous bounds, still
// bounded.
wyoming::FrameLimits ServerEventLimits() {
  wyoming::FrameLimits limits;
  limits.max_data_bytes = 16 << 20;
  limits.max_payload_bytes = 16 << 20;
  return limits;
}

bool ClosedUnderUs(const boost::system::error_code& ec) {
  return ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe;
}

// One connection, driven synchronously on the calling thread (blocking_steps.h).
class WyomingCall {
 public:
  WyomingCall() : socket_(io_), parser_(ServerEventLimits()) {}
  ~WyomingCall() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

  Outcome Connect(const Endpoint& endpoint, Deadline deadline) {
    return ConnectSocket(io_, socket_, nullptr, endpoint, "", false, deadline);
  }

  Outcome Send(const std::string& frame, Deadline deadline) {
    auto ec = Run(deadline,
                  [&](auto handler) { net::async_write(socket_, net::buffer(frame), handler); });
    if (!ec) return {};
    if (ec == net::error::timed_out)
      return Outcome::Error(ErrorKind::kTimeout, "timed out sending");
    return Outcome::Error(ErrorKind::kConnectionLost, "connection lost sending: " + ec.message());
  }

  // The next event, or false with `*end` set: kNone when the server closed the connection.
  bool Read(Deadline deadline, wyoming::Event* event, Outcome* end) {
    while (true) {
      absl::StatusOr<std::optional<wyoming::Event>> next = parser_.Next();
      if (!next.ok()) {
        *end = Outcome::Error(ErrorKind::kProtocol, std::string(next.status().message()));
        return false;
      }
      if (*next) {
        *event = **std::move(next);
        return true;
      }
      size_t got = 0;
      auto ec = Run(deadline, [&](auto handler) {
        socket_.async_read_some(
            net::buffer(buffer_),
            [&got, handler](const boost::system::error_code& e, size_t bytes) mutable {
              got = bytes;
              handler(e);
            });
      });
      if (ec == net::error::eof) {
        *end = {};
        return false;
      }
      if (ec) {
        *end = ec == net::error::timed_out
                   ? Outcome::Error(ErrorKind::kTimeout, "timed out waiting for the server")
                   : Outcome::Error(
                         ClosedUnderUs(ec) ? ErrorKind::kConnectionLost : ErrorKind::kProtocol,
                         "reading from the server: " + ec.message());
        return false;
      }
      parser_.Append(std::string_view(buffer_.data(), got));
    }
  }

 private:
  template <typename Start>
  boost::system::error_code Run(Deadline deadline, Start start) {
    return RunUntil(io_, deadline, start, [this] {
      boost::system::error_code ignored;
      socket_.close(ignored);
    });
  }

  net::io_context io_;
  tcp::socket socket_;
  wyoming::FrameParser parser_;
  std::array<char, 16 << 10> buffer_{};
};

Outcome ErrorEvent(const wyoming::Event& event) {
  Outcome outcome;
  outcome.kind = ErrorKind::kHttp;
  auto text = [&event](const char* key) {
    auto it = event.data.find(key);
    return it != event.data.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  outcome.code = text("code");
  outcome.http_status = WyomingTransport::HttpStatusForCode(outcome.code);
  outcome.message =
      "Wyoming error" + (outcome.code.empty() ? "" : " " + outcome.code) + ": " + text("text");
  return outcome;
}

int RateOf(const wyoming::Event& event) {
  auto it = event.data.find("rate");
  return it != event.data.end() && it->is_number_integer() ? it->get<int>() : 0;
}

}  // namespace

WyomingTransport::WyomingTransport(Endpoint endpoint, const ClientOptions& options)
    : endpoint_(std::move(endpoint)), connect_timeout_(options.connect_timeout) {}

int WyomingTransport::HttpStatusForCode(const std::string& code) {
  if (code == "voice_not_found" || code == "speaker_not_found" || code == "model_not_found") {
    return 404;
  }
  if (code == "empty_input" || code == "invalid_event" || code == "bad_frame" ||
      code == "invalid_argument") {
    return 400;
  }
  if (code == "input_too_long" || code == "payload_too_large") return 413;
  if (code == "queue_full" || code == "connection_limit" || code == "resource_exhausted") {
    return 429;
  }
  if (code == "server_draining" || code == "unavailable" || code == "engine_instance_lost") {
    return 503;
  }
  if (code == "deadline_exceeded") return 504;
  return 500;
}

Outcome WyomingTransport::Synthesize(const SpeechRequest& request, Deadline deadline,
                                     SpeechSink& sink) {
  const std::string& format = request.response_format;
  if (format != "pcm" && format != "wav") {
    return Outcome::Error(
        ErrorKind::kInvalidOptions,
        "wyoming:// carries raw PCM: response_format must be pcm or wav, not " + format);
  }
  WyomingCall call;
  Outcome outcome = call.Connect(endpoint_, std::min(deadline, Clock::now() + connect_timeout_));
  if (!outcome.ok()) return outcome;
  json data = {{"text", request.input}};
  if (!request.voice.empty()) data["voice"] = {{"name", request.voice}};
  Outcome sent = call.Send(wyoming::EncodeEvent("synthesize", data), deadline);
  if (sent.kind == ErrorKind::kTimeout) return sent;  // else the reads find the reason

  // A whole WAV file is held until audio-stop (its header needs the length).
  const bool whole_wav = format == "wav" && request.stream == StreamFormat::kNone;
  std::string held;
  int rate = 0;
  bool started = false, audio = false;
  wyoming::Event event;
  Outcome end;
  while (call.Read(deadline, &event, &end)) {
    if (event.type == "audio-start") {
      rate = RateOf(event);
      started = true;
      sink.OnHead(format == "wav" ? "audio/wav" : "audio/pcm", rate, "");
      if (format == "wav" && !whole_wav) sink.OnAudio(WavHeader(kUnknownWavLength, rate));
    } else if (event.type == "audio-chunk" && started) {
      audio = audio || !event.payload.empty();
      if (whole_wav) {
        held += event.payload;
      } else {
        sink.OnAudio(event.payload);
      }
    } else if (event.type == "audio-stop" && started) {
      if (whole_wav) sink.OnAudio(WavHeader(held.size(), rate) + held);
      return {};
    } else if (event.type == "error") {
      Outcome failure = ErrorEvent(event);
      if (audio && !whole_wav) failure.kind = ErrorKind::kStreamBroken;
      return failure;
    }
    // Anything else (a newer server's events) is not this client's business.
  }
  if (end.ok()) {
    end = Outcome::Error(ErrorKind::kConnectionLost,
                         "the server closed the connection before audio-stop");
  }
  if (audio && !whole_wav && end.kind == ErrorKind::kConnectionLost) {
    end.kind = ErrorKind::kStreamBroken;
  }
  return end;
}

Outcome WyomingTransport::ListVoices(const VoiceFilter& filter, Deadline deadline,
                                     std::vector<Voice>* voices) {
  WyomingCall call;
  Outcome outcome = call.Connect(endpoint_, std::min(deadline, Clock::now() + connect_timeout_));
  if (!outcome.ok()) return outcome;
  if (Outcome sent = call.Send(wyoming::EncodeEvent("describe"), deadline); !sent.ok()) return sent;
  wyoming::Event event;
  Outcome end;
  while (call.Read(deadline, &event, &end)) {
    if (event.type == "error") return ErrorEvent(event);
    if (event.type != "info") continue;
    auto programs = event.data.find("tts");
    if (programs == event.data.end() || !programs->is_array()) return {};
    for (const json& program : *programs) {
      if (!program.is_object() || !program.contains("voices") || !program["voices"].is_array()) {
        continue;
      }
      for (const json& listed : program["voices"]) {
        if (!listed.is_object() || !listed.contains("name") || !listed["name"].is_string())
          continue;
        Voice voice;
        voice.id = listed["name"].get<std::string>();
        voice.engine = "wyoming";
        if (listed.contains("description") && listed["description"].is_string()) {
          voice.description = listed["description"].get<std::string>();
        }
        if (listed.contains("languages") && listed["languages"].is_array() &&
            !listed["languages"].empty() && listed["languages"][0].is_string()) {
          voice.language = listed["languages"][0].get<std::string>();
        }
        if (!filter.language.empty() && !voice.language.starts_with(filter.language)) continue;
        voices->push_back(std::move(voice));
      }
    }
    return {};
  }
  if (end.ok()) end = Outcome::Error(ErrorKind::kConnectionLost, "no info from the server");
  return end;
}

Outcome WyomingTransport::ListModels(Deadline, std::vector<Model>*) {
  return Outcome::Error(ErrorKind::kUnimplemented,
                        "the Wyoming protocol has no models: ask the server's http:// endpoint");
}

Outcome WyomingTransport::CheckHealth(HealthProbe, Deadline, Health*) {
  return Outcome::Error(ErrorKind::kUnimplemented,
                        "the Wyoming protocol has no health check: ask the server's http:// "
                        "endpoint");
}

}  // namespace voxserve::client
