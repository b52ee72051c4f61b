// gRPC to one endpoint (grpc:// plaintext, grpcs:// TLS or mTLS): voxserve.v1.TextToSpeech's
// Synthesize (whole file), SynthesizeStream (chunks), ListVoices and ListModels over one HTTP/2
// channel, which gRPC multiplexes and reconnects by itself (no pool needed).
//
// gRPC status codes become the Outcome of the HTTP status they stand for (UNAVAILABLE → 503,
// RESOURCE_EXHAUSTED → 429, INVALID_ARGUMENT → 400, ...), so retries, breakers and ErrorInfo treat
// both protocols alike; the message keeps the gRPC code's name. The trailer retry-after-ms is
// Retry-After. A health check is ListModels: 200 when every model is READY, else 503.
#pragma once

#include <memory>
#include <string>

#include "client/endpoint.h"
#include "client/transport.h"

namespace voxserve::client {

// Safe cross thread (gRPC channels and stubs are).
class GrpcTransport final : public Transport {
 public:
  // Errors: unreadable TLS files.
  static absl::StatusOr<std::unique_ptr<Transport>> Create(const Endpoint& endpoint,
                                                           const ClientOptions& options);
  ~GrpcTransport() override;

  Outcome Synthesize(const SpeechRequest& request, Deadline deadline, SpeechSink& sink) override;
  Outcome ListVoices(const VoiceFilter& filter, Deadline deadline,
                     std::vector<Voice>* voices) override;
  Outcome ListModels(Deadline deadline, std::vector<Model>* models) override;
  Outcome CheckHealth(HealthProbe probe, Deadline deadline, Health* health) override;

 private:
  struct Channel;  // the gRPC types stay out of this header
  explicit GrpcTransport(std::unique_ptr<Channel> channel, std::string api_key);

  std::unique_ptr<Channel> channel_;
  const std::string api_key_;
};

}  // namespace voxserve::client
