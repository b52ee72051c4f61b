// What a transport hands TtsService for one synthesis, and how the audio comes back.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "audio/audio_format.h"
#include "core/request_context.h"

namespace voxserve::service {

struct SynthesisRequest {
  std::string model;  // as the client named it; empty or an OpenAI model name = the default model
  std::string voice;  // voice id, alias or OpenAI voice name; empty = the model's default voice
  std::string text;
  std::string text_field = "input";  // the request field holding the text, named in errors
  double speed = 1.0;  // 0.25 .. 4.0
  std::string instructions;  // accepted for OpenAI compatibility; engines without style control ignore it
  audio::AudioFormat format = audio::AudioFormat::kMp3;
  bool streaming = false;  // deliver bytes as each segment finishes
  std::optional<std::chrono::milliseconds> timeout;  // capped by limits.max_timeout_ms
  core::RequestContext context;
};

// Figures about a finished request, for logs, metrics and protocol trailers (SSE usage).
struct SynthesisSummary {
  std::string model;
  std::string voice;
  size_t input_chars = 0;
  int segments = 0;
  int output_sample_rate = 0;
  double audio_seconds = 0;
  double queue_wait_seconds = 0;  // summed over segments
  std::optional<double> time_to_first_audio_seconds;
  double total_seconds = 0;
};

// Receives one request's output; implemented by the transport. The service holds it until
// OnComplete. Calls are serialized (never concurrent) and made on service threads, never on the
// thread that called Synthesize.
class SynthesisSink {
 public:
  virtual ~SynthesisSink() = default;
  // Once, just before the first OnAudio: what the bytes will be (the rate depends on the voice,
  // which is only known once the service has resolved it).
  virtual void OnStart(int output_sample_rate) = 0;
  // Encoded bytes, in order. Non-streaming requests get the whole file in one call.
  virtual void OnAudio(std::string bytes) = 0;
  // Exactly once, last. An error after audio was delivered means the stream broke off.
  virtual void OnComplete(const absl::Status& status, const SynthesisSummary& summary) = 0;
  // Bytes delivered but not yet written to the client (safe cross thread). Above the service's
  // stream_buffer_bytes the request pauses until the transport calls SynthesisJob::Resume().
  virtual size_t BufferedBytes() const = 0;
};

}  // namespace voxserve::service
