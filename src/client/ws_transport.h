// WebSocket to one endpoint (ws:// plain, wss:// TLS or mTLS): Synthesize over voxserve's speech
// stream (GET /v1/audio/speech/stream), one connection per call: the config, the whole input with
// "close": true, then binary audio frames to the sink as they arrive until `done`. The catalog
// and health calls go over REST to the same host and port (the server serves both there).
//
// Errors read as REST's: a refused upgrade is the HTTP answer it is (401, 429 with Retry-After,
// 503, ...); an error event carries the status REST would have answered; a bare close code maps
// as ws_protocol.h says (1013 → 503, retried). After audio, an error is a broken stream.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "client/endpoint.h"
#include "client/http_transport.h"
#include "client/transport.h"

namespace voxserve::client {

// Safe cross thread: each call has its own connection and io_context; the rest is read-only.
//
// The speech stream encodes each sentence on its own (one container per sentence: right for
// playing as audio comes, wrong for one file). So a whole-file call (stream kNone) asks the socket
// for pcm and wraps it in one header (wav), or, for the compressed formats, which would need an
// encoder this client does not carry, goes over REST to the same host, where the server encodes
// the whole text once. Streaming calls always use the socket. Everything else (voices, models,
// health) is the REST transport's, to the same host over http(s)://.
class WsTransport final : public HttpTransport {
 public:
  // `tls` (null for ws://) outlives the transport.
  WsTransport(Endpoint endpoint, boost::asio::ssl::context* tls, const ClientOptions& options);

  Outcome Synthesize(const SpeechRequest& request, Deadline deadline, SpeechSink& sink) override;

 private:
  Outcome Stream(const SpeechRequest& request, Deadline deadline, SpeechSink& sink);

  const Endpoint endpoint_;
  boost::asio::ssl::context* const tls_;
  const std::string api_key_;
  const std::string user_agent_;
  const std::string server_name_;  // TLS
  const bool verify_peer_;
  const Millis connect_timeout_;
};

}  // namespace voxserve::client
