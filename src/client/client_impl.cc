#include "client/client_impl.h"

#include <thread>

#include "client/audio_duration.h"
#include "client/backoff.h"
#include "client/grpc_transport.h"
#include "client/http_transport.h"
#include "client/tls_context.h"
#include "client/ws_transport.h"
#include "client/wyoming_transport.h"

namespace voxserve::client {
namespace {

absl::StatusCode CodeFor(const Outcome& outcome) {
  switch (outcome.kind) {
    case ErrorKind::kNone:
      return absl::StatusCode::kOk;
    case ErrorKind::kInvalidOptions:
      return absl::StatusCode::kInvalidArgument;
    case ErrorKind::kTimeout:
      return absl::StatusCode::kDeadlineExceeded;
    case ErrorKind::kProtocol:
      return absl::StatusCode::kInternal;
    case ErrorKind::kHttp:
      return StatusCodeForHttp(outcome.http_status);
    case ErrorKind::kUnimplemented:
      return absl::StatusCode::kUnimplemented;
    case ErrorKind::kConnect:
    case ErrorKind::kTls:
    case ErrorKind::kConnectionLost:
    case ErrorKind::kStreamBroken:
    case ErrorKind::kCircuitOpen:
      return absl::StatusCode::kUnavailable;
  }
  return absl::StatusCode::kUnknown;
}

absl::Status ToStatus(const Outcome& outcome, const std::string& endpoint, int attempts) {
  ErrorInfo info{outcome.kind,  outcome.http_status,         outcome.type, outcome.code,
                 outcome.param, outcome.retry_after_seconds, endpoint};
  std::string message = endpoint.empty() ? outcome.message : endpoint + ": " + outcome.message;
  if (attempts > 1) message += " (after " + std::to_string(attempts) + " attempts)";
  return MakeError(CodeFor(outcome), message, info);
}

absl::Status Invalid(const std::string& message) {
  return MakeError(absl::StatusCode::kInvalidArgument, message,
                   ErrorInfo{ErrorKind::kInvalidOptions});
}

// Collects a synthesis answer into a SpeechResult, or passes the audio on to the caller.
class ResultSink final : public SpeechSink {
 public:
  ResultSink(const SpeechRequest& request, const AudioCallback* on_audio, Clock::time_point start)
      : format_(request.response_format),
        on_audio_(on_audio),
        start_(start),
        counter_(format_, 0) {}

  // Before each attempt: what a failed attempt collected is dropped (never audio already given
  // to a callback: such a call is not retried).
  void BeginAttempt() {
    if (delivered_) return;
    result_ = SpeechResult{};
    counter_ = AudioDurationCounter(format_, 0);
    server_seconds_.reset();
    first_audio_ = false;
  }
  void OnHead(const std::string& content_type, int sample_rate,
              const std::string& request_id) override {
    result_.content_type = content_type;
    result_.sample_rate = sample_rate;
    result_.request_id = request_id;
    counter_ = AudioDurationCounter(format_, sample_rate);
  }
  void OnAudio(std::string_view bytes) override {
    if (bytes.empty()) return;
    if (!first_audio_) {
      first_audio_ = true;
      result_.time_to_first_audio = Clock::now() - start_;
    }
    result_.audio_bytes += bytes.size();
    counter_.Add(bytes);
    if (on_audio_ != nullptr) {
      delivered_ = true;
      (*on_audio_)(bytes);
    } else {
      result_.audio.append(bytes);
    }
  }
  void OnAudioSeconds(double seconds) override { server_seconds_ = seconds; }
  void OnSampleRate(int sample_rate) override {
    if (result_.sample_rate == 0) result_.sample_rate = sample_rate;
  }

  bool delivered() const { return delivered_; }
  SpeechResult Finish() {
    result_.audio_seconds = counter_.seconds();
    if (!result_.audio_seconds) result_.audio_seconds = server_seconds_;
    result_.total = Clock::now() - start_;
    return std::move(result_);
  }

 private:
  const std::string format_;
  const AudioCallback* on_audio_;
  const Clock::time_point start_;
  SpeechResult result_;
  AudioDurationCounter counter_;
  std::optional<double> server_seconds_;
  bool first_audio_ = false;
  bool delivered_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Create(ClientOptions options) {
  return ClientImpl::Create(std::move(options));
}

ClientImpl::ClientImpl(ClientOptions options)
    : options_(std::move(options)), rng_(std::random_device{}()) {}

absl::StatusOr<std::unique_ptr<Client>> ClientImpl::Create(ClientOptions options) {
  const RetryPolicy& retry = options.retry;
  const CircuitBreakerOptions& breaker = options.breaker;
  if (options.endpoints.empty()) return Invalid("no endpoints");
  if (retry.max_attempts < 1) return Invalid("retry.max_attempts must be at least 1");
  if (retry.multiplier < 1.0) return Invalid("retry.multiplier must be at least 1");
  if (retry.initial_backoff.count() < 0 || retry.max_backoff < retry.initial_backoff) {
    return Invalid("retry backoff: need 0 <= initial_backoff <= max_backoff");
  }
  if (options.connect_timeout.count() <= 0 || options.attempt_timeout.count() <= 0 ||
      options.total_timeout.count() <= 0) {
    return Invalid("connect_timeout, attempt_timeout and total_timeout must be positive");
  }
  if (options.max_connections_per_endpoint < 1)
    return Invalid("max_connections_per_endpoint must be at least 1");
  if (breaker.enabled &&
      (breaker.min_calls < 1 || breaker.failure_rate <= 0 || breaker.failure_rate > 1 ||
       breaker.half_open_probes < 1 || breaker.window.count() <= 0)) {
    return Invalid(
        "breaker: need min_calls >= 1, 0 < failure_rate <= 1, half_open_probes >= 1, window > 0");
  }
  std::unique_ptr<ClientImpl> client(new ClientImpl(std::move(options)));
  const ClientOptions& opts = client->options_;
  for (const std::string& url : opts.endpoints) {
    auto endpoint = ParseEndpoint(url);
    if (!endpoint.ok()) return Invalid(std::string(endpoint.status().message()));
    EndpointState state{*endpoint, nullptr, std::make_unique<CircuitBreaker>(opts.breaker)};
    if (endpoint->tls() && endpoint->scheme != Scheme::kGrpcs && !client->tls_) {
      auto tls = MakeClientTlsContext(opts.tls);  // https:// and wss:// share it
      if (!tls.ok()) return Invalid(std::string(tls.status().message()));
      client->tls_ = std::move(*tls);
    }
    boost::asio::ssl::context* tls = endpoint->tls() ? client->tls_.get() : nullptr;
    switch (endpoint->scheme) {
      case Scheme::kHttp:
      case Scheme::kHttps:
        state.transport = std::make_unique<HttpTransport>(*endpoint, tls, opts);
        break;
      case Scheme::kWs:
      case Scheme::kWss:
        state.transport = std::make_unique<WsTransport>(*endpoint, tls, opts);
        break;
      case Scheme::kWyoming:
        state.transport = std::make_unique<WyomingTransport>(*endpoint, opts);
        break;
      case Scheme::kGrpc:
      case Scheme::kGrpcs: {
        auto transport = GrpcTransport::Create(*endpoint, opts);
        if (!transport.ok()) return Invalid(std::string(transport.status().message()));
        state.transport = *std::move(transport);
        break;
      }
    }
    client->urls_.push_back(url);
    client->endpoints_.push_back(std::move(state));
  }
  return std::unique_ptr<Client>(std::move(client));
}

BreakerState ClientImpl::breaker_state(size_t endpoint_index) const {
  if (endpoint_index >= endpoints_.size()) return BreakerState::kClosed;
  return endpoints_[endpoint_index].breaker->state();
}

std::chrono::nanoseconds ClientImpl::Backoff(int retry) {
  std::lock_guard lock(rng_mutex_);
  return BackoffBefore(options_.retry, retry, rng_);
}

ClientImpl::EndpointState* ClientImpl::Pick(size_t first) {
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    EndpointState& state = endpoints_[(first + i) % endpoints_.size()];
    if (state.breaker->TryAcquire()) return &state;
  }
  return nullptr;
}

absl::Status ClientImpl::Run(const AttemptFn& attempt, const std::function<void()>& before,
                             const std::function<bool()>& delivered, CallInfo* info) {
  const Clock::time_point start = Clock::now();
  const Deadline total_deadline = start + options_.total_timeout;
  const size_t base = options_.failover == Failover::kRoundRobin ? next_endpoint_.fetch_add(1) : 0;
  std::chrono::nanoseconds slept{0};
  for (int number = 1;; ++number) {
    EndpointState* state = Pick(base + static_cast<size_t>(number - 1));
    if (state == nullptr) {
      return ToStatus(Outcome::Error(ErrorKind::kCircuitOpen,
                                     "every endpoint's circuit breaker is open; not sent"),
                      "", number - 1);
    }
    if (before) before();
    Clock::time_point attempt_start = Clock::now();
    Deadline deadline = std::min(attempt_start + options_.attempt_timeout, total_deadline);
    Outcome outcome = attempt(*state->transport, deadline);
    bool was_delivered = delivered && delivered();
    if (was_delivered && outcome.kind == ErrorKind::kConnectionLost) {
      outcome.kind = ErrorKind::kStreamBroken;
    }
    if (outcome.kind == ErrorKind::kTimeout && Clock::now() >= total_deadline &&
        deadline == total_deadline) {
      outcome.message += " (total timeout)";
    }
    if (outcome.endpoint_neutral) {
      state->breaker->Release();
    } else {
      state->breaker->Record(CountsAsBreakerFailure(outcome.kind, outcome.http_status));
    }
    if (info != nullptr) {
      info->attempts.push_back(
          Attempt{state->endpoint.url,
                  outcome.ok() ? absl::OkStatus() : ToStatus(outcome, state->endpoint.url, 1),
                  outcome.http_status, attempt_start, slept});
    }
    if (outcome.ok()) return absl::OkStatus();
    auto give_up = [&] { return ToStatus(outcome, state->endpoint.url, number); };
    if (!IsRetryable(outcome.kind, outcome.http_status, was_delivered) ||
        number >= options_.retry.max_attempts) {
      return give_up();
    }
    std::chrono::nanoseconds pause = Backoff(number);
    if (outcome.retry_after_seconds) {
      std::chrono::seconds asked(*outcome.retry_after_seconds);
      if (asked > options_.retry.max_retry_after) return give_up();
      pause = std::max<std::chrono::nanoseconds>(pause, asked);
    }
    if (Clock::now() + pause >= total_deadline) return give_up();
    std::this_thread::sleep_for(pause);
    slept = pause;
  }
}

absl::StatusOr<SpeechResult> ClientImpl::Speak(const SpeechRequest& request,
                                               const AudioCallback* on_audio, CallInfo* info) {
  if (request.input.empty()) return Invalid("input is empty");
  ResultSink sink(request, on_audio, Clock::now());
  absl::Status status =
      Run([&](Transport& transport,
              Deadline deadline) { return transport.Synthesize(request, deadline, sink); },
          [&sink] { sink.BeginAttempt(); }, [&sink] { return sink.delivered(); }, info);
  if (!status.ok()) return status;
  return sink.Finish();
}

absl::StatusOr<SpeechResult> ClientImpl::Synthesize(const SpeechRequest& request, CallInfo* info) {
  if (request.stream != StreamFormat::kNone) {
    return Invalid("Synthesize takes stream = kNone; use SynthesizeStream for streams");
  }
  return Speak(request, nullptr, info);
}

absl::StatusOr<SpeechResult> ClientImpl::SynthesizeStream(const SpeechRequest& request,
                                                          const AudioCallback& on_audio,
                                                          CallInfo* info) {
  SpeechRequest streamed = request;
  if (streamed.stream == StreamFormat::kNone) streamed.stream = StreamFormat::kAudio;
  return Speak(streamed, &on_audio, info);
}

absl::StatusOr<std::vector<Voice>> ClientImpl::ListVoices(const VoiceFilter& filter,
                                                          CallInfo* info) {
  std::vector<Voice> voices;
  absl::Status status =
      Run([&](Transport& transport,
              Deadline deadline) { return transport.ListVoices(filter, deadline, &voices); },
          [&voices] { voices.clear(); }, nullptr, info);
  if (!status.ok()) return status;
  return voices;
}

absl::StatusOr<std::vector<Model>> ClientImpl::ListModels(CallInfo* info) {
  std::vector<Model> models;
  absl::Status status =
      Run([&](Transport& transport,
              Deadline deadline) { return transport.ListModels(deadline, &models); },
          [&models] { models.clear(); }, nullptr, info);
  if (!status.ok()) return status;
  return models;
}

absl::StatusOr<Health> ClientImpl::CheckHealth(HealthProbe probe, CallInfo* info) {
  Health health;
  absl::Status status =
      Run([&](Transport& transport,
              Deadline deadline) { return transport.CheckHealth(probe, deadline, &health); },
          [&health] { health = Health{}; }, nullptr, info);
  if (!status.ok()) return status;
  return health;
}

}  // namespace voxserve::client
