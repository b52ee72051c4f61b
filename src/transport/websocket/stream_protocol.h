// The seam between the WebSocket machinery (WebSocketConnection: handshake, reads, the write
// queue, timers, the close) and a protocol spoken over it. The endpoint picks a protocol by the
// upgrade request's path: voxserve's own speech stream (SpeechStream) or ElevenLabs'
// stream-input / multi-stream-input (transport/elevenlabs).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/request_context.h"
#include "service/tts_service.h"
#include "transport/auth/authenticator.h"
#include "transport/auth/key_limiter.h"
#include "transport/websocket/stream_output.h"
#include "transport/websocket/websocket_metrics.h"

namespace voxserve::transport::websocket {

// Who is on the other end; from the upgrade request.
struct StreamCaller {
  std::string request_id;     // each sentence's request is "<request_id>/<index>"
  auth::AuthResult auth;      // allowed models; key name and subject for the log
  auth::Admission admission;  // the key's concurrency slot, released with the stream
  std::string remote;
  core::Clock::time_point
      started_at;      // the upgrade request's arrival: `done` timings count from it
  std::string target;  // the request target: path and query
  // False: the upgrade had no valid key and the protocol must authenticate the caller itself
  // (ProtocolRoute::authenticates_in_stream); `auth` and `admission` are empty until it has.
  bool authenticated = true;
};

// How the connection ended, as the connection saw it.
enum class ConnectionEnd {
  kClosed,           // the close handshake the server started has completed (or failed)
  kByClient,         // the client closed, or went away (reset, EOF, no pong)
  kTooBig,           // the client sent a message over the limit; Beast closed with 1009
  kHandshakeFailed,  // a malformed upgrade request (Beast answered 400)
};

// Every method runs on the connection's strand. Owned by the connection, which outlives the
// work the protocol starts (the protocol hands its sinks the connection's keep_alive).
class StreamProtocol {
 public:
  virtual ~StreamProtocol() = default;

  virtual void OnMessage(std::string_view message) = 0;
  virtual void OnBinaryMessage() = 0;
  // An audio message (binary) reached the socket: a request paused for this client may go on.
  virtual void OnAudioWritten() = 0;
  // Audio is being made or waits: the connection is not idle.
  virtual bool Busy() const = 0;
  // Nothing to do for websocket.idle_timeout_ms.
  virtual void OnIdleTimeout() = 0;
  // Shutdown: running work finishes, then the socket closes with 1001.
  virtual void Drain() = 0;
  // The socket is gone: work still queued is cancelled.
  virtual void OnConnectionEnded(ConnectionEnd end, std::optional<int> client_close_code) = 0;
};

// What a protocol is made with; `output` and `keep_alive` are the connection.
struct ProtocolEnv {
  service::TtsService& service;
  WebSocketMetrics& metrics;
  StreamOutput& output;
  std::weak_ptr<StreamOutput> keep_alive;
  StreamCaller caller;
};

// One protocol on the endpoint: the paths it serves and how to make it. Safe cross thread.
struct ProtocolRoute {
  std::string route;  // the metrics' and log's route label, e.g. "/v1/audio/speech/stream"
  std::function<bool(std::string_view path)> serves;
  std::function<std::unique_ptr<StreamProtocol>(ProtocolEnv env)> make;
  // An upgrade without a valid key is handed over all the same: the protocol takes the key in
  // its first message (http::WebSocketUpgrader::AuthenticatesInStream).
  bool authenticates_in_stream = false;
};

}  // namespace voxserve::transport::websocket
