#include "transport/http/connection_refusal.h"

#include <array>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <string>

#include "core/error.h"
#include "transport/http/error_response.h"

namespace voxserve::transport::http {
namespace net = boost::asio;

namespace {

// How long a refused client may keep sending before the socket closes.
constexpr auto kLinger = std::chrono::seconds(1);

const std::string& RefusalResponse() {
  static const std::string response = [] {
    std::string body = ErrorJson(
        absl::UnavailableError("the server has as many connections open as it may; retry shortly"));
    return "HTTP/1.1 503 Service Unavailable\r\nServer: voxserve\r\n"
           "Content-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
           "Content-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }();
  return response;
}

// Owned by its pending handlers; runs on the socket's strand.
class Refusal : public std::enable_shared_from_this<Refusal> {
 public:
  Refusal(net::ip::tcp::socket socket, std::atomic<int>& pending)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), pending_(pending) {}
  ~Refusal() { pending_.fetch_sub(1); }

  void Start() {
    timer_.expires_after(kLinger);
    timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec) self->Close();
    });
    net::async_write(socket_, net::buffer(RefusalResponse()),
                     [self = shared_from_this()](boost::system::error_code ec, size_t) {
                       if (ec) return self->Close();
                       boost::system::error_code ignored;
                       self->socket_.shutdown(net::ip::tcp::socket::shutdown_send, ignored);
                       self->Drain();
                     });
  }

 private:
  void Drain() {
    socket_.async_read_some(net::buffer(discard_),
                            [self = shared_from_this()](boost::system::error_code ec, size_t) {
                              if (ec) return self->Close();  // EOF: the client has closed
                              self->Drain();
                            });
  }

  void Close() {
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
  }

  net::ip::tcp::socket socket_;
  net::steady_timer timer_;
  std::atomic<int>& pending_;
  std::array<char, 1024> discard_{};
};

}  // namespace

void RefuseConnection(net::ip::tcp::socket socket, std::atomic<int>& pending) {
  if (pending.fetch_add(1) >= kMaxPendingRefusals) {
    pending.fetch_sub(1);
    boost::system::error_code ignored;
    socket.close(ignored);
    return;
  }
  std::make_shared<Refusal>(std::move(socket), pending)->Start();
}

}  // namespace voxserve::transport::http
