// The Client behind Client::Create: picks an endpoint per attempt (failover, circuit breakers),
// retries what is safe with backoff, enforces the total timeout, and turns Outcomes into Status.
#pragma once

#include <atomic>
#include <boost/asio/ssl/context.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "client/circuit_breaker.h"
#include "client/client.h"
#include "client/endpoint.h"
#include "client/transport.h"

namespace voxserve::client {

// Safe cross thread: endpoints are fixed after Create; breakers, pools and the RNG lock inside.
class ClientImpl final : public Client {
 public:
  static absl::StatusOr<std::unique_ptr<Client>> Create(ClientOptions options);

  absl::StatusOr<SpeechResult> Synthesize(const SpeechRequest& request, CallInfo* info) override;
  absl::StatusOr<SpeechResult> SynthesizeStream(const SpeechRequest& request,
                                                const AudioCallback& on_audio,
                                                CallInfo* info) override;
  absl::StatusOr<std::vector<Voice>> ListVoices(const VoiceFilter& filter, CallInfo* info) override;
  absl::StatusOr<std::vector<Model>> ListModels(CallInfo* info) override;
  absl::StatusOr<Health> CheckHealth(HealthProbe probe, CallInfo* info) override;
  const std::vector<std::string>& endpoints() const override { return urls_; }
  BreakerState breaker_state(size_t endpoint_index) const override;

 private:
  struct EndpointState {
    Endpoint endpoint;
    std::unique_ptr<Transport> transport;
    std::unique_ptr<CircuitBreaker> breaker;
  };
  // One attempt against a transport; `before` runs before each attempt (resets partial state),
  // `delivered` says whether the caller has seen audio (no retry then).
  using AttemptFn = std::function<Outcome(Transport&, Deadline)>;

  explicit ClientImpl(ClientOptions options);
  absl::Status Run(const AttemptFn& attempt, const std::function<void()>& before,
                   const std::function<bool()>& delivered, CallInfo* info);
  EndpointState* Pick(size_t first);
  absl::StatusOr<SpeechResult> Speak(const SpeechRequest& request, const AudioCallback* on_audio,
                                     CallInfo* info);
  std::chrono::nanoseconds Backoff(int retry);

  const ClientOptions options_;
  std::unique_ptr<boost::asio::ssl::context> tls_;
  std::vector<std::string> urls_;
  std::vector<EndpointState> endpoints_;
  std::atomic<size_t> next_endpoint_{0};  // round robin
  std::mutex rng_mutex_;
  std::mt19937_64 rng_;
};

}  // namespace voxserve::client
