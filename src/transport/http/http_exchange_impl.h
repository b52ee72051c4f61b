// The HttpExchange a route receives: a handle on one exchange of one HttpSession that moves every
// call onto the session's strand.
#pragma once

#include <memory>
#include <string>

#include "transport/http/http_exchange.h"

namespace voxserve::transport::http {

class HttpSession;

// Keeps its session alive; safe cross thread (see HttpExchange).
class HttpExchangeImpl final : public HttpExchange {
 public:
  HttpExchangeImpl(std::shared_ptr<HttpSession> session, uint64_t id, HttpRequest request,
                   std::string request_id, auth::AuthResult auth);

  const HttpRequest& request() const override { return request_; }
  const std::string& request_id() const override { return request_id_; }
  const auth::AuthResult& auth() const override { return auth_; }
  void Respond(HttpResponse response) override;
  void StartStream(HttpResponse head) override;
  void WriteStream(std::string bytes) override;
  void EndStream() override;
  void AbortStream() override;
  size_t BufferedBytes() const override;
  void OnDrained(std::function<void()> callback) override;
  void OnClientGone(std::function<void()> callback) override;
  void AnnotateLog(std::function<void(core::RequestLogEntry&)> annotate) override;

 private:
  const std::shared_ptr<HttpSession> session_;
  const uint64_t id_;
  const HttpRequest request_;
  const std::string request_id_;
  const auth::AuthResult auth_;
};

}  // namespace voxserve::transport::http
