// One request/response exchange as a handler sees it. Implemented by the connection
// (HttpSession); handlers and response sinks may call it from any thread.
#pragma once

#include <functional>
#include <string>

#include "core/structured_log.h"
#include "transport/auth/authenticator.h"
#include "transport/http/http_message.h"

namespace voxserve::transport::http {

// Safe cross thread: every method hands its work to the connection's strand. Exactly one of
// Respond(), EndStream() or AbortStream() ends the exchange; calls after the end, or after the
// client went away, are ignored.
class HttpExchange {
 public:
  virtual ~HttpExchange() = default;

  virtual const HttpRequest& request() const = 0;
  virtual const std::string& request_id() const = 0;
  // Who is calling, as the Authenticator found before the route ran (key_name empty: auth is
  // off or the route is open).
  virtual const auth::AuthResult& auth() const = 0;

  // A complete response (Content-Length set from the body).
  virtual void Respond(HttpResponse response) = 0;

  // A chunked response: head's status and headers, then bytes as they come, then the end.
  virtual void StartStream(HttpResponse head) = 0;
  virtual void WriteStream(std::string bytes) = 0;
  virtual void EndStream() = 0;
  // Breaks the stream off (no terminating chunk) and closes the connection once the bytes
  // written before it are sent, so the client gets them and sees the transfer fail rather than
  // a truncated success.
  virtual void AbortStream() = 0;

  // Stream bytes accepted but not yet written to the socket.
  virtual size_t BufferedBytes() const = 0;
  // Called on the connection's strand whenever a write finishes and the buffer is below the
  // watermark. Set once, before the first WriteStream.
  virtual void OnDrained(std::function<void()> callback) = 0;
  // Called once on the connection's strand if the client disconnects before the exchange ends.
  virtual void OnClientGone(std::function<void()> callback) = 0;

  // Adds what the route knows (model, voice, audio seconds, ...) to the request's log line,
  // written when the exchange ends. Runs on the connection's strand; call before the end.
  virtual void AnnotateLog(std::function<void(core::RequestLogEntry&)> annotate) = 0;
};

}  // namespace voxserve::transport::http
