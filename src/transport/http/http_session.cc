#include "transport/http/http_session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cctype>
#include <random>

#include "core/error.h"
#include "spdlog/spdlog.h"
#include "transport/http/error_response.h"
#include "transport/http/http_exchange_impl.h"

namespace voxserve::transport::http {
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;

namespace {

// Bytes asked for per socket read while waiting for a request or watching for a disconnect.
constexpr size_t kReadChunk = 4096;

std::string NewRequestId() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(random()));
  return buffer;
}

// A client-supplied X-Request-Id is kept if it is short and printable; it ends up in logs.
std::string RequestIdFrom(const HttpRequest& request) {
  std::string_view given = request.Header("x-request-id");
  if (given.empty() || given.size() > 128) return NewRequestId();
  for (char c : given) {
    if (!std::isprint(static_cast<unsigned char>(c))) return NewRequestId();
  }
  return std::string(given);
}

HttpRequest ToHttpRequest(bhttp::request<bhttp::string_body>& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  std::string_view target(message.target().data(), message.target().size());
  size_t question = target.find('?');
  request.path = std::string(target.substr(0, question));
  if (question != std::string_view::npos) request.query = std::string(target.substr(question + 1));
  for (const auto& field : message) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    request.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  request.body = std::move(message.body());
  return request;
}

template <typename Message>
void CopyHeaders(const HttpResponse& response, const std::string& request_id, Message& message) {
  for (const auto& [name, value] : response.headers) message.set(name, value);
  message.set(bhttp::field::server, "voxserve");
  message.set("X-Request-Id", request_id);
}

}  // namespace

HttpSession::HttpSession(net::ip::tcp::socket socket, std::shared_ptr<SessionShared> shared)
    : socket_(std::move(socket)),
      shared_(std::move(shared)),
      read_timer_(socket_.get_executor()),
      write_timer_(socket_.get_executor()) {
  shared_->metrics->connections.Add(1);
}

HttpSession::~HttpSession() { shared_->metrics->connections.Add(-1); }

void HttpSession::Start() {
  net::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->WaitForRequest(); });
}

void HttpSession::Close() {
  net::post(socket_.get_executor(), [self = shared_from_this()] { self->CloseSocket(); });
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
  parser_->body_limit(shared_->config.max_body_bytes);
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
  socket_.async_read_some(
      buffer_.prepare(kReadChunk),
      [self = shared_from_this()](boost::system::error_code ec, size_t bytes) {
        self->OnReadSome(ec, bytes);
      });
}

void HttpSession::OnReadSome(boost::system::error_code ec, size_t bytes) {
  reading_some_ = false;
  if (ec) return CloseSocket();  // EOF, reset or a timeout: during an exchange, the client left
  buffer_.commit(bytes);
  // During an exchange these are pipelined bytes of the next request; they wait in buffer_.
  if (!exchange_.active) ReadHeader();
}

void HttpSession::ReadHeader() {
  ArmTimer(read_timer_, shared_->config.header_timeout_ms);
  bhttp::async_read_header(socket_, buffer_, *parser_,
                           [self = shared_from_this()](boost::system::error_code ec, size_t) {
                             self->OnHeader(ec);
                           });
}

void HttpSession::OnHeader(boost::system::error_code ec) {
  read_timer_.cancel();
  if (closed_) return;
  if (ec == bhttp::error::end_of_stream) return CloseSocket();
  if (ec == bhttp::error::header_limit) {
    return RespondToBadRequest(431, "request headers exceed " +
                                        std::to_string(shared_->config.max_header_bytes) + " bytes");
  }
  if (ec == bhttp::error::body_limit) {
    // Beast checks Content-Length against the limit with the header: the body is never read.
    return RespondToBadRequest(413, "request body exceeds the limit of " +
                                        std::to_string(shared_->config.max_body_bytes) + " bytes");
  }
  if (ec) return RespondToBadRequest(400, "malformed HTTP request: " + ec.message());
  first_request_ = false;
  auto& message = parser_->get();
  if (beast::iequals(message[bhttp::field::expect], "100-continue")) {
    // curl sends this for bodies over 1 KiB and waits a second for the go-ahead otherwise.
    Enqueue(Raw{std::make_shared<std::string>("HTTP/1.1 100 Continue\r\n\r\n")});
  }
  ArmTimer(read_timer_, shared_->config.body_timeout_ms);
  bhttp::async_read(socket_, buffer_, *parser_,
                    [self = shared_from_this()](boost::system::error_code ec, size_t) {
                      self->OnBody(ec);
                    });
}

void HttpSession::OnBody(boost::system::error_code ec) {
  read_timer_.cancel();
  if (closed_) return;
  if (ec == bhttp::error::body_limit) {
    return RespondToBadRequest(413, "request body exceeds the limit of " +
                                        std::to_string(shared_->config.max_body_bytes) + " bytes");
  }
  if (ec) return RespondToBadRequest(400, "malformed HTTP request body: " + ec.message());
  Dispatch();
}

void HttpSession::BeginExchange(std::string route, bool keep_alive, bool head_only) {
  exchange_ = Exchange{};
  exchange_.id = ++next_exchange_id_;
  exchange_.active = true;
  exchange_.keep_alive = keep_alive && !shared_->draining.load();
  exchange_.head_only = head_only;
  exchange_.route = std::move(route);
  exchange_.started = core::Clock::now();
}

void HttpSession::RespondToBadRequest(int status, const std::string& message) {
  BeginExchange("invalid", false, false);
  exchange_.request_id = NewRequestId();
  absl::Status error = status == 413 ? core::PayloadTooLarge(message)
                                     : core::InvalidArgument(message, {}, "bad_request");
  HttpResponse response = ErrorResponse(error);
  response.status = status;
  Respond(exchange_.id, std::move(response));
}

void HttpSession::Dispatch() {
  HttpRequest request = ToHttpRequest(parser_->get());
  bool keep_alive = parser_->get().keep_alive();
  Router::Match match = shared_->router->Find(request.method, request.path);
  BeginExchange(match.route, keep_alive, request.method == "HEAD");
  exchange_.request_id = RequestIdFrom(request);
  // Watch the socket while the route works, so a client that leaves is noticed at once. With
  // pipelined bytes already buffered there is nothing to watch with: they must be parsed first.
  if (!reading_some_ && buffer_.size() == 0) ReadSome();
  auto exchange = std::make_shared<HttpExchangeImpl>(shared_from_this(), exchange_.id,
                                                     std::move(request), exchange_.request_id);
  if (match.handler == nullptr) return exchange->Respond(std::move(match.error));
  try {
    (*match.handler)(exchange);
  } catch (const std::exception& error) {
    spdlog::error("handler for {} threw: {}", match.route, error.what());
    exchange->Respond(ErrorResponse(core::Internal("internal error")));
  }
}

bool HttpSession::IsCurrent(uint64_t exchange) const {
  return !closed_ && exchange_.active && exchange_.id == exchange && !exchange_.final_queued;
}

void HttpSession::Respond(uint64_t exchange, HttpResponse response) {
  if (!IsCurrent(exchange) || exchange_.stream_started) return;
  auto message = std::make_shared<bhttp::response<bhttp::string_body>>(
      static_cast<bhttp::status>(response.status), 11);
  CopyHeaders(response, exchange_.request_id, *message);
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
  message->keep_alive(exchange_.keep_alive);
  message->chunked(true);
  exchange_.status = head.status;
  exchange_.stream_started = true;
  auto serializer =
      std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*message);
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
  CloseSocket();
}

void HttpSession::SetOnDrained(uint64_t exchange, std::function<void()> callback) {
  if (IsCurrent(exchange)) exchange_.on_drained = std::move(callback);
}

void HttpSession::SetOnClientGone(uint64_t exchange, std::function<void()> callback) {
  if (IsCurrent(exchange)) exchange_.on_client_gone = std::move(callback);
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
  writing_ = true;
  Outgoing item = std::move(outgoing_.front());
  outgoing_.pop_front();
  ArmTimer(write_timer_, shared_->config.write_timeout_ms);
  auto self = shared_from_this();
  std::visit(
      [&](auto& current) {
        using T = std::decay_t<decltype(current)>;
        if constexpr (std::is_same_v<T, FullResponse>) {
          bhttp::async_write(socket_, *current.message,
                             [self, keep = current.message](boost::system::error_code ec, size_t) {
                               self->OnWritten(ec, true, 0);
                             });
        } else if constexpr (std::is_same_v<T, StreamHead>) {
          bhttp::async_write_header(socket_, *current.serializer,
                                    [self, keep = current](boost::system::error_code ec, size_t) {
                                      self->OnWritten(ec, false, 0);
                                    });
        } else if constexpr (std::is_same_v<T, Chunk>) {
          net::async_write(socket_, bhttp::make_chunk(net::buffer(*current.bytes)),
                           [self, keep = current.bytes](boost::system::error_code ec, size_t) {
                             self->OnWritten(ec, false, keep->size());
                           });
        } else if constexpr (std::is_same_v<T, LastChunk>) {
          net::async_write(socket_, bhttp::make_chunk_last(),
                           [self](boost::system::error_code ec, size_t) {
                             self->OnWritten(ec, true, 0);
                           });
        } else {
          net::async_write(socket_, net::buffer(*current.bytes),
                           [self, keep = current.bytes](boost::system::error_code ec, size_t) {
                             self->OnWritten(ec, false, 0);
                           });
        }
      },
      item);
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
  double seconds =
      std::chrono::duration<double>(core::Clock::now() - exchange_.started).count();
  shared_->metrics->requests.WithLabels({exchange_.route, std::to_string(exchange_.status)})
      .Increment();
  shared_->metrics->duration.WithLabels({exchange_.route}).Observe(seconds);
  bool keep_alive = exchange_.keep_alive;
  exchange_ = Exchange{};
  if (!keep_alive) {
    boost::system::error_code ignored;
    socket_.shutdown(net::ip::tcp::socket::shutdown_send, ignored);
    return CloseSocket();
  }
  WaitForRequest();
}

void HttpSession::CloseSocket() {
  if (closed_) return;
  closed_ = true;
  read_timer_.cancel();
  write_timer_.cancel();
  boost::system::error_code ignored;
  socket_.shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  if (exchange_.active) {
    // The client left (or was cut off) before its response was complete.
    shared_->metrics->requests.WithLabels({exchange_.route, "499"}).Increment();
    std::function<void()> on_gone = std::move(exchange_.on_client_gone);
    exchange_ = Exchange{};
    if (on_gone) on_gone();
  }
  outgoing_.clear();
  buffered_bytes_.store(0, std::memory_order_relaxed);
}

}  // namespace voxserve::transport::http
