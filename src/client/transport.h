// The seam between the protocol-neutral Client (retries, failover, breakers) and one endpoint's
// wire protocol: REST (http_transport), gRPC (grpc_transport), WebSocket (ws_transport) and
// Wyoming (wyoming_transport), picked by the endpoint's scheme in Client::Create.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/client.h"
#include "client/client_error.h"

namespace voxserve::client {

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// How one attempt ended. kind kNone: success.
struct Outcome {
  ErrorKind kind = ErrorKind::kNone;
  std::string message;
  int http_status = 0;
  std::string type, code, param;  // the server's error fields
  std::optional<int> retry_after_seconds;
  // Says nothing about the endpoint's health (the caller's own wait for a pooled connection ran
  // out): not counted by the circuit breaker.
  bool endpoint_neutral = false;

  bool ok() const { return kind == ErrorKind::kNone; }
  static Outcome Error(ErrorKind kind, std::string message) {
    Outcome outcome;
    outcome.kind = kind;
    outcome.message = std::move(message);
    return outcome;
  }
};

// Where a transport puts a synthesis answer. Called on the calling thread, in order: OnHead once,
// then OnAudio any number of times, OnAudioSeconds when the server reports a duration, and
// OnSampleRate when the rate was not known at OnHead (WebSocket: with the first segment_done).
class SpeechSink {
 public:
  virtual ~SpeechSink() = default;
  virtual void OnHead(const std::string& content_type, int sample_rate,
                      const std::string& request_id) = 0;
  virtual void OnAudio(std::string_view bytes) = 0;
  virtual void OnAudioSeconds(double seconds) = 0;
  virtual void OnSampleRate(int /*sample_rate*/) {}
};

// One endpoint's protocol. Safe cross thread: the Client calls it from every thread at once.
// Every call ends by `deadline` (or reports kTimeout).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual Outcome Synthesize(const SpeechRequest& request, Deadline deadline, SpeechSink& sink) = 0;
  virtual Outcome ListVoices(const VoiceFilter& filter, Deadline deadline,
                             std::vector<Voice>* voices) = 0;
  virtual Outcome ListModels(Deadline deadline, std::vector<Model>* models) = 0;
  virtual Outcome CheckHealth(HealthProbe probe, Deadline deadline, Health* health) = 0;
};

}  // namespace voxserve::client
