// libvoxclient: a C++ client for voxserve.
//
//   auto client = voxserve::client::Client::Create({.endpoints = {"http://127.0.0.1:8080"}});
//   if (!client.ok()) ...;
//   voxserve::client::SpeechRequest request{.input = "Hello.", .voice = "alloy",
//                                           .response_format = "wav"};
//   absl::StatusOr<voxserve::client::SpeechResult> speech = (*client)->Synthesize(request);
//   if (speech.ok()) WriteFile("hello.wav", speech->audio);
//
// Every call is synchronous and runs on the caller's thread; one Client is meant to be shared by
// every thread of a process (it is safe cross thread). Calls retry where that is safe (see
// RetryPolicy), fail over between endpoints and fail fast while an endpoint's circuit breaker is
// open. Errors are absl::Status values (never exceptions) carrying an ErrorInfo.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/client_error.h"
#include "client/client_options.h"

namespace voxserve::client {

enum class StreamFormat {
  kNone,   // one complete file (Content-Length): "stream": false
  kAudio,  // REST stream_format=audio: chunked bytes as each sentence is synthesized
  kSse,    // REST stream_format=sse: base64 audio in server-sent events, usage at the end
};

// POST /v1/audio/speech. Fields as the server documents them.
struct SpeechRequest {
  std::string input;
  std::string voice = "alloy";
  std::string model = "tts-1";
  std::string response_format = "mp3";
  double speed = 1.0;
  std::string instructions;
  // SynthesizeStream picks kAudio when kNone. ws:// ignores it: the speech stream always streams.
  StreamFormat stream = StreamFormat::kNone;
  std::string request_id;                     // sent as X-Request-Id; empty: the server's own
};

struct SpeechResult {
  std::string audio;         // the file; empty from SynthesizeStream (the callback had it)
  size_t audio_bytes = 0;    // audio bytes received (decoded from base64 for SSE)
  std::string content_type;  // audio/wav, ...; SSE: text/event-stream
  int sample_rate = 0;       // X-Sample-Rate; 0 when not sent
  std::string request_id;    // X-Request-Id of the answer
  // Seconds of audio: counted from the bytes for pcm (bytes / (2 × sample_rate)) and wav (data
  // bytes / block size / rate), from the server's usage for SSE; empty for compressed formats.
  std::optional<double> audio_seconds;
  std::chrono::nanoseconds time_to_first_audio{0};  // call start → first audio byte
  std::chrono::nanoseconds total{0};                // call start → last byte
};

// Called on the calling thread with each piece of audio as it arrives; must not throw. Once it
// has been called the call is never retried (the caller may have played the audio).
using AudioCallback = std::function<void(std::string_view audio)>;

struct Voice {
  std::string id, model, engine, language, description, alias_of;
  int sample_rate = 0;
};
struct VoiceFilter {
  std::string model, language;  // empty: all
};
struct Model {
  std::string id, engine, state, alias_of, error;
  int voices = 0;
};

enum class HealthProbe { kLive, kReady, kDetail };  // /health/live, /health/ready, /health
struct Health {
  int http_status = 0;
  std::string body;  // the server's answer (JSON for kDetail)
};

// One attempt of a call, for callers that want to see retries and failover (voxctl -v, tests).
struct Attempt {
  std::string endpoint;
  absl::Status status;
  int http_status = 0;
  std::chrono::steady_clock::time_point started;
  std::chrono::nanoseconds backoff_before{0};  // slept before this attempt
};
struct CallInfo {
  std::vector<Attempt> attempts;
};

enum class BreakerState { kClosed, kOpen, kHalfOpen };

// Safe cross thread. Must outlive the calls made on it.
class Client {
 public:
  // Checks the options (endpoints parse, TLS files load) and builds the pools; connects lazily.
  static absl::StatusOr<std::unique_ptr<Client>> Create(ClientOptions options);
  virtual ~Client() = default;

  // The whole file in SpeechResult::audio (request.stream must be kNone). Retried even after
  // part of the body arrived: nothing has reached the caller yet.
  virtual absl::StatusOr<SpeechResult> Synthesize(const SpeechRequest& request,
                                                  CallInfo* info = nullptr) = 0;
  // Audio to `on_audio` as it arrives (kAudio unless request.stream is kSse).
  virtual absl::StatusOr<SpeechResult> SynthesizeStream(const SpeechRequest& request,
                                                        const AudioCallback& on_audio,
                                                        CallInfo* info = nullptr) = 0;
  virtual absl::StatusOr<std::vector<Voice>> ListVoices(const VoiceFilter& filter = {},
                                                        CallInfo* info = nullptr) = 0;
  virtual absl::StatusOr<std::vector<Model>> ListModels(CallInfo* info = nullptr) = 0;
  // The probe's answer, 200 or 503 (not ready, draining) alike: a health check is not retried.
  // Errors: no answer, or another status (401 when health needs a key).
  virtual absl::StatusOr<Health> CheckHealth(HealthProbe probe, CallInfo* info = nullptr) = 0;

  // The endpoints as given, and the state of each one's circuit breaker.
  virtual const std::vector<std::string>& endpoints() const = 0;
  virtual BreakerState breaker_state(size_t endpoint_index) const = 0;
};

}  // namespace voxserve::client
