// REST over HTTP/1.1 (plain or TLS) to one endpoint: voxserve's /v1/audio/speech (whole file,
// chunked audio or SSE), /v1/voices, /v1/models and /health*, over a pool of keep-alive
// connections.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <functional>
#include <memory>
#include <string>

#include "client/connection_pool.h"
#include "client/endpoint.h"
#include "client/transport.h"

namespace voxserve::client {

// Safe cross thread (the pool is; everything else is read-only after construction).
class HttpTransport : public Transport {
 public:
  // `tls` (null for http://) outlives the transport.
  HttpTransport(Endpoint endpoint, boost::asio::ssl::context* tls, const ClientOptions& options);

  Outcome Synthesize(const SpeechRequest& request, Deadline deadline, SpeechSink& sink) override;
  Outcome ListVoices(const VoiceFilter& filter, Deadline deadline,
                     std::vector<Voice>* voices) override;
  Outcome ListModels(Deadline deadline, std::vector<Model>* models) override;
  Outcome CheckHealth(HealthProbe probe, Deadline deadline, Health* health) override;

 private:
  struct Call {
    const char* method;
    std::string path;  // after the endpoint's prefix, with any query
    std::string body;  // JSON, POST only
    std::string request_id;
    bool error_statuses_are_answers = false;  // health: 503 is an answer, not an error
  };
  using HeadHandler = std::function<void(const ResponseHead&)>;
  using BodyHandler = std::function<void(std::string_view)>;

  // One request and its response. A reused keep-alive connection that turns out closed is
  // replaced by a new one once, within the same attempt.
  Outcome Exchange(const Call& call, Deadline deadline, const HeadHandler& on_head,
                   const BodyHandler& on_body);
  Outcome GetJson(const std::string& path, Deadline deadline, std::string* body);
  std::string Serialize(const Call& call) const;

  const Endpoint endpoint_;
  const std::string api_key_;
  const std::string user_agent_;
  const Millis connect_timeout_;
  ConnectionPool pool_;
};

}  // namespace voxserve::client
