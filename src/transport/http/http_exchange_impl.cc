#include "transport/http/http_exchange_impl.h"

#include <boost/asio/dispatch.hpp>

#include "transport/http/http_session.h"

namespace voxserve::transport::http {

// dispatch: runs inline when already on the session's strand (the route's own thread), else
// queues onto it, so calls from one thread keep their order.

HttpExchangeImpl::HttpExchangeImpl(std::shared_ptr<HttpSession> session, uint64_t id,
                                   HttpRequest request, std::string request_id,
                                   auth::AuthResult auth)
    : session_(std::move(session)),
      id_(id),
      request_(std::move(request)),
      request_id_(std::move(request_id)),
      auth_(std::move(auth)) {}

void HttpExchangeImpl::Respond(HttpResponse response) {
  boost::asio::dispatch(session_->executor(),
                        [session = session_, id = id_, response = std::move(response)]() mutable {
                          session->Respond(id, std::move(response));
                        });
}

void HttpExchangeImpl::StartStream(HttpResponse head) {
  boost::asio::dispatch(session_->executor(),
                        [session = session_, id = id_, head = std::move(head)]() mutable {
                          session->StartStream(id, std::move(head));
                        });
}

void HttpExchangeImpl::WriteStream(std::string bytes) {
  boost::asio::dispatch(session_->executor(),
                        [session = session_, id = id_, bytes = std::move(bytes)]() mutable {
                          session->WriteStream(id, std::move(bytes));
                        });
}

void HttpExchangeImpl::EndStream() {
  boost::asio::dispatch(session_->executor(),
                        [session = session_, id = id_] { session->EndStream(id); });
}

void HttpExchangeImpl::AbortStream() {
  boost::asio::dispatch(session_->executor(),
                        [session = session_, id = id_] { session->AbortStream(id); });
}

size_t HttpExchangeImpl::BufferedBytes() const { return session_->BufferedBytes(); }

void HttpExchangeImpl::OnDrained(std::function<void()> callback) {
  boost::asio::dispatch(session_->executor(),
                        [session = session_, id = id_, callback = std::move(callback)]() mutable {
                          session->SetOnDrained(id, std::move(callback));
                        });
}

void HttpExchangeImpl::OnClientGone(std::function<void()> callback) {
  boost::asio::dispatch(session_->executor(),
                        [session = session_, id = id_, callback = std::move(callback)]() mutable {
                          session->SetOnClientGone(id, std::move(callback));
                        });
}

void HttpExchangeImpl::AnnotateLog(std::function<void(core::RequestLogEntry&)> annotate) {
  boost::asio::dispatch(session_->executor(),
                        [session = session_, id = id_, annotate = std::move(annotate)]() mutable {
                          session->AnnotateLog(id, std::move(annotate));
                        });
}

}  // namespace voxserve::transport::http
