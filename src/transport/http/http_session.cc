#include "transport/http/http_session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include "core/error.h"
#include "core/request_id.h"
#include "spdlog/spdlog.h"
#include "transport/http/beast_message.h"
#include "transport/http/error_response.h"
#include "transport/http/http_exchange_impl.h"
#include "transport/http/query_string.h"
#include "transport/http/request_checks.h"

namespace voxserve::transport::http {
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;

namespace {

// ?token= (ours, as ElevenLabs' realtime API takes it) or ?single_use_token=; empty if neither.
std::string AccessTokenInQuery(std::string_view query) {
  if (query.find("token=") == std::string_view::npos) return {};
  auto parsed = ParseQuery(query);
  if (!parsed.ok()) return {};
  for (const char* name : {"token", "single_use_token"}) {
    if (auto found = parsed->find(name); found != parsed->end()) return found->second;
  }
  return {};
}

// Bytes asked for per socket read while waiting for a request or watching for a disconnect.
constexpr size_t kReadChunk = 4096;
// After a response with Connection: close, input is read and dropped for up to this long before
// the socket closes: closing with unread input makes the kernel send RST, which can destroy the
// response (a 413, say) before the client reads it. nginx's lingering_timeout is 5 s; our
// clients are programs, not browsers on slow links.
constexpr int kLingerMs = 1000;

HttpStream MakeStream(net::ip::tcp::socket socket, std::shared_ptr<net::ssl::context> context) {
  if (context) return HttpStream(std::move(socket), std::move(context));
  return HttpStream(std::move(socket));
}

}  // namespace

HttpSession::HttpSession(net::ip::tcp::socket socket,
                         std::shared_ptr<net::ssl::context> tls_context,
                         std::shared_ptr<SessionShared> shared)
    : stream_(MakeStream(std::move(socket), std::move(tls_context))),
      shared_(std::move(shared)),
      read_timer_(stream_.socket().get_executor()),
      write_timer_(stream_.socket().get_executor()) {
  boost::system::error_code ec;
  auto endpoint = stream_.socket().remote_endpoint(ec);
  if (!ec) remote_ = endpoint.address().to_string();
  shared_->metrics->connections.Add(1);
}

HttpSession::~HttpSession() { shared_->metrics->connections.Add(-1); }

void HttpSession::Start() {
  net::dispatch(executor(), [self = shared_from_this()] {
    if (!self->stream_.is_tls()) return self->WaitForRequest();
    // The first bytes decide: a TLS record starts the handshake, anything else is plain HTTP
    // sent to the TLS port. The handshake shares the header timeout.
    self->awaiting_handshake_ = true;
    self->ArmTimer(self->read_timer_, self->shared_->config.header_timeout_ms);
    self->ReadSome();
  });
}

void HttpSession::Close() {
  net::post(executor(), [self = shared_from_this()] { self->CloseSocket(); });
}

void HttpSession::ArmTimer(net::steady_timer& timer, int milliseconds) {
  timer.expires_after(std::chrono::milliseconds(milliseconds));
  timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    // operation_aborted: re-armed or cancelled. Otherwise the phase ran out of time.
    if (!ec) self->CloseSocket();
  });
}

void HttpSession::WaitForRequest() {
  if (closed_) return;
  parser_.emplace();
  // Beast checks Content-Length against the limit while parsing the header, before the route is
  // known: allow the largest route limit here and narrow it in OnHeader.
  body_limit_ = shared_->router->LargestBodyLimit(shared_->config.max_body_bytes);
  parser_->body_limit(body_limit_);
  parser_->header_limit(static_cast<std::uint32_t>(shared_->config.max_header_bytes));
  const HttpConfig& config = shared_->config;
  // A read still pending from watching the last exchange delivers the next request's first
  // bytes; only one read may be outstanding on the socket.
  if (reading_some_) return ArmTimer(read_timer_, config.idle_timeout_ms);
  if (buffer_.size() > 0) return ReadHeader();  // a pipelined request is already here
  ArmTimer(read_timer_, first_request_ ? config.header_timeout_ms : config.idle_timeout_ms);
  ReadSome();
}

void HttpSession::ReadSome() {
  reading_some_ = true;
  auto handler = [self = shared_from_this()](boost::system::error_code ec, size_t bytes) {
    self->OnReadSome(ec, bytes);
  };
  stream_.Visit(
      [&](auto& stream) { stream.async_read_some(buffer_.prepare(kReadChunk), handler); });
}

void HttpSession::OnReadSome(boost::system::error_code ec, size_t bytes) {
  reading_some_ = false;
  if (lingering_) {
    if (ec || closed_) return CloseSocket();
    return ReadSome();  // never committed: the bytes are dropped
  }
  if (ec) {
    // A client may close its side once it has what it needs (curl does after reading the
    // response): with the whole response queued that is no departure. Let the writes finish.
    bool half_closed = ec == net::error::eof || ec == net::ssl::error::stream_truncated;
    if (half_closed && exchange_.active && exchange_.final_queued) {
      exchange_.keep_alive = false;
      return;
    }
    return CloseSocket();  // EOF, reset or a timeout: during an exchange, the client left
  }
  buffer_.commit(bytes);
  if (awaiting_handshake_) return StartTls();
  // During an exchange these are pipelined bytes of the next request; they wait in buffer_.
  if (!exchange_.active) ReadHeader();
}

void HttpSession::ReadHeader() {
  ArmTimer(read_timer_, shared_->config.header_timeout_ms);
  auto handler = [self = shared_from_this()](boost::system::error_code ec, size_t) {
    self->OnHeader(ec);
  };
  stream_.Visit(
      [&](auto& stream) { bhttp::async_read_header(stream, buffer_, *parser_, handler); });
}

void HttpSession::OnHeader(boost::system::error_code ec) {
  read_timer_.cancel();
  if (closed_) return;
  if (ec == bhttp::error::end_of_stream) return CloseSocket();
  if (ec == bhttp::error::header_limit) {
    return RespondToBadRequest(
        431,
        "request headers exceed " + std::to_string(shared_->config.max_header_bytes) + " bytes");
  }
  if (ec == bhttp::error::body_limit) {
    // Beast checks Content-Length against the limit with the header: the body is never read.
    return RespondToBadRequest(
        413, "request body exceeds the limit of " + std::to_string(body_limit_) + " bytes");
  }
  if (ec) return RespondToBadRequest(400, "malformed HTTP request: " + ec.message());
  first_request_ = false;
  auto& message = parser_->get();
  {
    std::string_view target(message.target().data(), message.target().size());
    std::string path(target.substr(0, target.find('?')));
    body_limit_ = shared_->router->BodyLimit(std::string(message.method_string()), path,
                                             shared_->config.max_body_bytes);
    auto length = parser_->content_length();
    if (length && *length > body_limit_) {
      return RespondToBadRequest(
          413, "request body exceeds the limit of " + std::to_string(body_limit_) + " bytes");
    }
    parser_->body_limit(body_limit_);
  }
  if (beast::iequals(message[bhttp::field::expect], "100-continue")) {
    // curl sends this for bodies over 1 KiB and waits a second for the go-ahead otherwise.
    Enqueue(Raw{std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n")});
  }
  ArmTimer(read_timer_, shared_->config.body_timeout_ms);
  auto handler = [self = shared_from_this()](boost::system::error_code ec, size_t) {
    self->OnBody(ec);
  };
  stream_.Visit([&](auto& stream) { bhttp::async_read(stream, buffer_, *parser_, handler); });
}

void HttpSession::OnBody(boost::system::error_code ec) {
  read_timer_.cancel();
  if (closed_) return;
  if (ec == bhttp::error::body_limit) {
    return RespondToBadRequest(
        413, "request body exceeds the limit of " + std::to_string(body_limit_) + " bytes");
  }
  if (ec) return RespondToBadRequest(400, "malformed HTTP request body: " + ec.message());
  Dispatch();
}

void OpenExchanges::Add() {
  std::lock_guard lock(mutex_);
  ++count_;
}

void OpenExchanges::Remove() {
  std::lock_guard lock(mutex_);
  if (--count_ == 0) none_.notify_all();
}

bool OpenExchanges::WaitNone(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return none_.wait_for(lock, timeout, [this] { return count_ == 0; });
}

void HttpSession::BeginExchange(std::string route, bool keep_alive, bool head_only) {
  exchange_ = Exchange{};
  exchange_.id = ++next_exchange_id_;
  exchange_.active = true;
  shared_->open_exchanges.Add();
  exchange_.open = std::shared_ptr<void>(
      nullptr, [shared = shared_](void*) { shared->open_exchanges.Remove(); });
  exchange_.keep_alive = keep_alive && !shared_->draining.load();
  exchange_.head_only = head_only;
  exchange_.route = std::move(route);
  exchange_.started = core::Clock::now();
  exchange_.log.route = exchange_.route;
  exchange_.log.remote = remote_;
  exchange_.log.client_subject = client_subject_;
}

void HttpSession::RespondToBadRequest(int status, const std::string& message) {
  BeginExchange("invalid", false, false);
  exchange_.request_id = core::NewRequestId();
  exchange_.log.request_id = exchange_.request_id;
  absl::Status error = status == 413 ? core::PayloadTooLarge(message)
                                     : core::InvalidArgument(message, {}, "bad_request");
  HttpResponse response = ErrorResponse(error);
  response.status = status;
  Respond(exchange_.id, std::move(response));
}

void HttpSession::Dispatch() {
  const bool upgrade = beast::websocket::is_upgrade(parser_->get());
  HttpRequest request = ToHttpRequest(parser_->get());
  bool keep_alive = parser_->get().keep_alive();
  Router::Match match = shared_->router->Find(request.method, request.path);
  BeginExchange(match.route, keep_alive, request.method == "HEAD");
  exchange_.close_delimited = parser_->get().version() < 11;
  exchange_.request_id = RequestIdFrom(request);
  exchange_.log.request_id = exchange_.request_id;
  exchange_.log.method = request.method;
  const bool websocket = upgrade && match.handler != nullptr && WantsWebSocket(request);
  // CORS: a preflight is answered before authentication (browsers send it without the key);
  // an allowed origin's actual response carries the Access-Control-* headers.
  if (std::optional<HttpResponse> preflight = shared_->cors->Preflight(request)) {
    auto exchange =
        std::make_shared<HttpExchangeImpl>(shared_from_this(), exchange_.id, std::move(request),
                                           exchange_.request_id, auth::AuthResult{});
    return exchange->Respond(*std::move(preflight));
  }
  exchange_.cors_headers = shared_->cors->ResponseHeaders(request.Header("origin"));
  // Watch the socket while the route works, so a client that leaves is noticed at once. With
  // pipelined bytes already buffered there is nothing to watch with: they must be parsed first.
  // Not before an upgrade: the socket may be handed over, and no read may be pending on it then.
  if (!websocket && !reading_some_ && buffer_.size() == 0) ReadSome();
  auth::AuthResult caller;
  caller.client_subject = client_subject_;
  absl::Status refused = CheckHost(request, parser_->get().version());
  if (refused.ok() && websocket &&
      !shared_->cors->AllowsWebSocket(request.Header("origin"), request.Header("host"))) {
    // Not CORS's to guard (a WebSocket is not fetched), so checked here: while CORS is on, a
    // page may open one only from the server's own origin or an allowed one.
    refused = core::PermissionDenied(
        "origin " + core::Quoted(request.Header("origin")) + " is not in http.cors.allowed_origins",
        {}, "cors_refused");
  }
  // A browser cannot set a header on a WebSocket: there an access token may come in the URL
  // (never an API key, which would land in proxies' logs).
  const std::string url_token = websocket ? AccessTokenInQuery(request.query) : std::string();
  if (refused.ok() && shared_->authenticator != nullptr) {
    auto result = url_token.empty()
                      ? shared_->authenticator->Authenticate(
                            [&request](std::string_view name) { return request.Header(name); },
                            client_subject_, match.resource)
                      : shared_->authenticator->AuthenticateToken(url_token);
    if (result.ok()) {
      caller = std::move(*result);
    } else {
      refused = result.status();
    }
  }
  exchange_.log.key = caller.key_name;
  std::optional<HttpResponse> bad_handshake;
  // A protocol that takes the key in its first message checks it there (the host was fine).
  bool deferred = false;
  if (websocket && url_token.empty() && absl::IsUnauthenticated(refused) &&
      shared_->websocket->AuthenticatesInStream(request.path)) {
    refused = absl::OkStatus();
    deferred = true;
  }
  if (websocket && refused.ok()) {
    bad_handshake = RefuseWebSocketHandshake(request);
    if (!bad_handshake) refused = HandOverToWebSocket(caller, !deferred);
    if (!bad_handshake && refused.ok()) return;  // the connection is the WebSocket session's now
  }
  auto exchange =
      std::make_shared<HttpExchangeImpl>(shared_from_this(), exchange_.id, std::move(request),
                                         exchange_.request_id, std::move(caller));
  if (!refused.ok()) {
    return exchange->Respond(match.format_error ? match.format_error(refused, exchange_.request_id)
                                                : ErrorResponse(refused));
  }
  if (bad_handshake) return exchange->Respond(*std::move(bad_handshake));
  if (match.handler == nullptr) return exchange->Respond(std::move(match.error));
  try {
    (*match.handler)(exchange);
  } catch (const std::exception& error) {
    spdlog::error("handler for {} threw: {}", match.route, error.what());
    exchange->Respond(ErrorResponse(core::Internal("internal error")));
  }
}

bool HttpSession::WantsWebSocket(const HttpRequest& request) const {
  return shared_->websocket != nullptr && shared_->websocket->Serves(request.path);
}

// A refusal is answered as any HTTP error (and logged as an exchange); success ends this
// session's part: the WebSocket session writes the 101 and its own log line.
absl::Status HttpSession::HandOverToWebSocket(auth::AuthResult caller, bool authenticated) {
  if (shared_->draining.load()) return core::Draining("server is shutting down");
  // RFC 6455 §4.1: the client waits for the 101 before sending frames. Bytes already here (or a
  // 100 Continue being written) would be lost in the hand-over.
  if (buffer_.size() > 0 || writing_) {
    return core::InvalidArgument("data sent before the WebSocket handshake completed", {},
                                 "bad_request");
  }
  auth::Admission admission;
  if (shared_->authenticator != nullptr && authenticated) {
    auto admitted = shared_->authenticator->Admit(caller);
    if (!admitted.ok()) return admitted.status();
    admission = std::move(*admitted);
  }
  UpgradeRequest upgrade{std::move(stream_), parser_->release(),   exchange_.request_id,
                         std::move(caller),  std::move(admission), remote_,
                         exchange_.started,  authenticated};
  // Nothing of this session touches the socket from now on (CloseSocket sees closed_).
  exchange_ = Exchange{};
  closed_ = true;
  read_timer_.cancel();
  write_timer_.cancel();
  shared_->websocket->Upgrade(std::move(upgrade));
  return absl::OkStatus();
}

bool HttpSession::IsCurrent(uint64_t exchange) const {
  return !closed_ && exchange_.active && exchange_.id == exchange && !exchange_.final_queued;
}

void HttpSession::Respond(uint64_t exchange, HttpResponse response) {
  if (!IsCurrent(exchange) || exchange_.stream_started) return;
  auto message = std::make_shared<bhttp::response<bhttp::string_body>>(
      static_cast<bhttp::status>(response.status), 11);
  CopyHeaders(response, exchange_.request_id, *message);
  for (const auto& [name, value] : exchange_.cors_headers) message->set(name, value);
  message->keep_alive(exchange_.keep_alive);
  message->body() = std::move(response.body);
  message->prepare_payload();
  if (exchange_.head_only) message->body().clear();  // Content-Length stays that of the GET
  exchange_.status = response.status;
  exchange_.final_queued = true;
  Enqueue(FullResponse{std::move(message)});
}

void HttpSession::StartStream(uint64_t exchange, HttpResponse head) {
  if (!IsCurrent(exchange) || exchange_.stream_started) return;
  auto message = std::make_shared<bhttp::response<bhttp::empty_body>>(
      static_cast<bhttp::status>(head.status), 11);
  CopyHeaders(head, exchange_.request_id, *message);
  for (const auto& [name, value] : exchange_.cors_headers) message->set(name, value);
  if (exchange_.close_delimited) {
    message->version(10);
    exchange_.keep_alive = false;
  }
  message->keep_alive(exchange_.keep_alive);
  message->chunked(!exchange_.close_delimited);
  exchange_.status = head.status;
  exchange_.stream_started = true;
  auto serializer = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*message);
  Enqueue(StreamHead{std::move(message), std::move(serializer)});
}

void HttpSession::WriteStream(uint64_t exchange, std::string bytes) {
  if (!IsCurrent(exchange) || !exchange_.stream_started || bytes.empty()) return;
  buffered_bytes_.fetch_add(bytes.size(), std::memory_order_relaxed);
  Enqueue(Chunk{std::make_shared<std::string>(std::move(bytes))});
}

void HttpSession::EndStream(uint64_t exchange) {
  if (!IsCurrent(exchange) || !exchange_.stream_started) return;
  exchange_.final_queued = true;
  Enqueue(LastChunk{});
}

void HttpSession::AbortStream(uint64_t exchange) {
  if (!IsCurrent(exchange)) return;
  spdlog::debug("aborting stream on {}", exchange_.route);
  Enqueue(Cut{});
}

void HttpSession::SetOnDrained(uint64_t exchange, std::function<void()> callback) {
  if (IsCurrent(exchange)) exchange_.on_drained = std::move(callback);
}

void HttpSession::SetOnClientGone(uint64_t exchange, std::function<void()> callback) {
  if (IsCurrent(exchange)) exchange_.on_client_gone = std::move(callback);
}

void HttpSession::AnnotateLog(uint64_t exchange,
                              std::function<void(core::RequestLogEntry&)> annotate) {
  // The final response may be queued already: the line is written once it has left.
  if (!closed_ && exchange_.active && exchange_.id == exchange) annotate(exchange_.log);
}

void HttpSession::Enqueue(Outgoing item) {
  outgoing_.push_back(std::move(item));
  if (!writing_) WriteNext();
}

void HttpSession::WriteNext() {
  if (closed_ || outgoing_.empty()) {
    writing_ = false;
    return;
  }
  if (std::holds_alternative<Cut>(outgoing_.front())) {
    writing_ = false;
    return CloseSocket();
  }
  writing_ = true;
  Outgoing item = std::move(outgoing_.front());
  outgoing_.pop_front();
  ArmTimer(write_timer_, shared_->config.write_timeout_ms);
  auto self = shared_from_this();
  stream_.Visit([&](auto& stream) {
    std::visit(
        [&](auto& current) {
          using T = std::decay_t<decltype(current)>;
          if constexpr (std::is_same_v<T, FullResponse>) {
            bhttp::async_write(
                stream, *current.message,
                [self, keep = current.message](boost::system::error_code ec, size_t) {
                  self->OnWritten(ec, true, 0);
                });
          } else if constexpr (std::is_same_v<T, StreamHead>) {
            bhttp::async_write_header(stream, *current.serializer,
                                      [self, keep = current](boost::system::error_code ec, size_t) {
                                        self->OnWritten(ec, false, 0);
                                      });
          } else if constexpr (std::is_same_v<T, Chunk>) {
            auto written = [self, keep = current.bytes](boost::system::error_code ec, size_t) {
              self->OnWritten(ec, false, keep->size());
            };
            if (exchange_.close_delimited) {
              net::async_write(stream, net::buffer(*current.bytes), std::move(written));
            } else {
              net::async_write(stream, bhttp::make_chunk(net::buffer(*current.bytes)),
                               std::move(written));
            }
          } else if constexpr (std::is_same_v<T, LastChunk>) {
            auto written = [self](boost::system::error_code ec, size_t) {
              self->OnWritten(ec, true, 0);
            };
            if (exchange_.close_delimited) {  // the close that follows ends the body
              net::async_write(stream, net::const_buffer(), std::move(written));
            } else {
              net::async_write(stream, bhttp::make_chunk_last(), std::move(written));
            }
          } else if constexpr (std::is_same_v<T, Raw>) {
            net::async_write(stream, net::buffer(*current.bytes),
                             [self, keep = current.bytes](boost::system::error_code ec, size_t) {
                               self->OnWritten(ec, false, 0);
                             });
          }
        },
        item);
  });
}

void HttpSession::OnWritten(boost::system::error_code ec, bool final, size_t chunk_bytes) {
  write_timer_.cancel();
  if (chunk_bytes > 0) buffered_bytes_.fetch_sub(chunk_bytes, std::memory_order_relaxed);
  if (ec || closed_) return CloseSocket();
  if (chunk_bytes > 0 && exchange_.on_drained) exchange_.on_drained();
  if (final) {
    FinishExchange();
    if (closed_) return;
  }
  WriteNext();
}

void HttpSession::FinishExchange() {
  double seconds = std::chrono::duration<double>(core::Clock::now() - exchange_.started).count();
  shared_->metrics->requests.WithLabels({exchange_.route, std::to_string(exchange_.status)})
      .Increment();
  shared_->metrics->duration.WithLabels({exchange_.route}).Observe(seconds);
  LogExchange(exchange_.status);
  bool keep_alive = exchange_.keep_alive;
  exchange_ = Exchange{};
  if (!keep_alive) return LingerThenClose();
  WaitForRequest();
}

void HttpSession::LogExchange(int status) {
  exchange_.log.status = status;
  exchange_.log.total_seconds =
      std::chrono::duration<double>(core::Clock::now() - exchange_.started).count();
  core::LogRequest(exchange_.log);
}

void HttpSession::LingerThenClose() {
  if (closed_) return;
  boost::system::error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  lingering_ = true;
  ArmTimer(read_timer_, kLingerMs);
  if (!reading_some_) ReadSome();
}

void HttpSession::CloseSocket() {
  if (closed_) return;
  closed_ = true;
  read_timer_.cancel();
  write_timer_.cancel();
  boost::system::error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  stream_.socket().close(ignored);
  if (exchange_.active) {
    // The client left (or was cut off) before its response was complete.
    shared_->metrics->requests.WithLabels({exchange_.route, "499"}).Increment();
    LogExchange(499);
    std::function<void()> on_gone = std::move(exchange_.on_client_gone);
    exchange_ = Exchange{};
    if (on_gone) on_gone();
  }
  outgoing_.clear();
  buffered_bytes_.store(0, std::memory_order_relaxed);
}

}  // namespace voxserve::transport::http
