// One client connection: completes the TLS handshake when the listener has TLS, reads requests
// (with header, body and idle timeouts and size limits), authenticates each, hands it to its
// route, writes whole or chunked responses, notices when the client goes away mid-request so its
// work can be cancelled, and writes one log line per request.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>

#include "core/request_context.h"
#include "core/structured_log.h"
#include "transport/auth/authenticator.h"
#include "transport/http/http_config.h"
#include "transport/http/http_metrics.h"
#include "transport/http/http_stream.h"
#include "transport/http/router.h"
#include "transport/http/websocket_upgrade.h"

namespace voxserve::transport::http {

// How many exchanges (requests answered over HTTP) have begun and not ended, i.e. whose
// response is not yet written out (or whose connection has not closed). The drain waits for
// none: a response the service has finished may still be queued on its connection. Safe cross
// thread.
class OpenExchanges {
 public:
  void Add();
  void Remove();
  // True once none is open, false when `timeout` passes first.
  bool WaitNone(std::chrono::milliseconds timeout);

 private:
  std::mutex mutex_;
  std::condition_variable none_;
  int count_ = 0;
};

// What every session of one server shares; owned by HttpServer, which outlives its sessions'
// I/O (the io_context stops before the server goes away).
struct SessionShared {
  HttpConfig config;
  const Router* router = nullptr;
  HttpMetrics* metrics = nullptr;
  const auth::Authenticator* authenticator = nullptr;  // null: every request allowed
  WebSocketUpgrader* websocket = nullptr;              // null: no WebSocket routes
  std::unique_ptr<const Cors> cors;                    // from config.cors
  std::atomic<bool> draining{false};                   // answer with Connection: close from now on
  OpenExchanges open_exchanges;
};

// Owned by shared_ptrs held by its pending I/O handlers and by the exchanges handed to routes.
// Every member is touched only on the socket's strand, except buffered_bytes_ (atomic).
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  // tls_context null: plain HTTP.
  HttpSession(boost::asio::ip::tcp::socket socket,
              std::shared_ptr<boost::asio::ssl::context> tls_context,
              std::shared_ptr<SessionShared> shared);
  ~HttpSession();

  void Start();  // safe cross thread
  void Close();  // safe cross thread

  // The exchange's calls, each posted onto the strand by the exchange (http_exchange_impl.cc);
  // calls for an exchange that has ended are ignored.
  void Respond(uint64_t exchange, HttpResponse response);
  void StartStream(uint64_t exchange, HttpResponse head);
  void WriteStream(uint64_t exchange, std::string bytes);
  void EndStream(uint64_t exchange);
  void AbortStream(uint64_t exchange);
  void SetOnDrained(uint64_t exchange, std::function<void()> callback);
  void SetOnClientGone(uint64_t exchange, std::function<void()> callback);
  void AnnotateLog(uint64_t exchange, std::function<void(core::RequestLogEntry&)> annotate);
  size_t BufferedBytes() const { return buffered_bytes_.load(std::memory_order_relaxed); }

  boost::asio::any_io_executor executor() { return stream_.socket().get_executor(); }

 private:
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;
  struct FullResponse {
    std::shared_ptr<boost::beast::http::response<boost::beast::http::string_body>> message;
  };
  struct StreamHead {
    std::shared_ptr<boost::beast::http::response<boost::beast::http::empty_body>> message;
    std::shared_ptr<boost::beast::http::response_serializer<boost::beast::http::empty_body>>
        serializer;
  };
  struct Chunk {
    std::shared_ptr<std::string> bytes;
  };
  struct LastChunk {};
  struct Raw {
    std::shared_ptr<std::string> bytes;
  };
  // Ends a streamed response without its last chunk once everything queued before it is
  // written: the client sees an incomplete body, and all the audio sent before the cut.
  struct Cut {};
  using Outgoing = std::variant<FullResponse, StreamHead, Chunk, LastChunk, Raw, Cut>;

  struct Exchange {
    uint64_t id = 0;
    bool active = false;
    bool keep_alive = true;
    bool head_only = false;
    bool stream_started = false;
    bool final_queued = false;
    // An HTTP/1.0 client knows no chunked transfer: its stream is the bytes as they are, ended
    // by closing the connection (RFC 9112 §6.3).
    bool close_delimited = false;
    int status = 0;
    std::string route;
    std::string request_id;
    std::vector<std::pair<std::string, std::string>> cors_headers;  // on its response
    core::Clock::time_point started;
    core::RequestLogEntry log;  // written when the exchange ends
    std::function<void()> on_drained;
    std::function<void()> on_client_gone;
    // Counted in SessionShared::open_exchanges while this exchange is active: released when it
    // ends (written, handed to a WebSocket, or its connection closed), and with the session.
    std::shared_ptr<void> open;
  };

  void StartTls();
  void OnHandshake(boost::system::error_code ec, size_t bytes_used);
  void RefusePlainHttp();
  void WaitForRequest();
  void ReadSome();
  void OnReadSome(boost::system::error_code ec, size_t bytes);
  void ReadHeader();
  void OnHeader(boost::system::error_code ec);
  void OnBody(boost::system::error_code ec);
  void Dispatch();
  bool WantsWebSocket(const HttpRequest& request) const;
  absl::Status HandOverToWebSocket(auth::AuthResult caller, bool authenticated);
  void RespondToBadRequest(int status, const std::string& message);

  void BeginExchange(std::string route, bool keep_alive, bool head_only);
  bool IsCurrent(uint64_t exchange) const;
  void Enqueue(Outgoing item);
  void WriteNext();
  void OnWritten(boost::system::error_code ec, bool final, size_t chunk_bytes);
  void FinishExchange();
  void LogExchange(int status);
  void LingerThenClose();
  void CloseSocket();

  void ArmTimer(boost::asio::steady_timer& timer, int milliseconds);

  HttpStream stream_;
  std::shared_ptr<SessionShared> shared_;
  std::string remote_;          // peer address, for logs
  std::string client_subject_;  // verified client certificate (mTLS), once the handshake is done
  boost::asio::steady_timer read_timer_;
  boost::asio::steady_timer write_timer_;
  boost::beast::flat_buffer buffer_;
  std::optional<Parser> parser_;
  bool reading_some_ = false;
  bool awaiting_handshake_ = false;  // TLS: the first bytes decide between handshake and refusal
  bool lingering_ = false;           // response sent, input discarded until the client closes
  bool first_request_ = true;
  size_t body_limit_ = 0;  // of the request being read: the route's (Router::BodyLimit)
  bool closed_ = false;
  bool writing_ = false;
  std::deque<Outgoing> outgoing_;
  Exchange exchange_;
  uint64_t next_exchange_id_ = 0;
  std::atomic<size_t> buffered_bytes_{0};
};

}  // namespace voxserve::transport::http
