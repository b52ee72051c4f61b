// A connection over http.max_connections gets a short 503 with Retry-After and Connection: close
// instead of a silent close, so clients and load balancers can tell "busy" from "broken".
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>

namespace voxserve::transport::http {

// Each refusal holds a socket and a small buffer for about a second; this many at once is enough
// to answer a burst, and bounds what a flood of connections can make the server hold (also in
// descriptors: server/open_file_limit.h keeps room for them).
inline constexpr int kMaxPendingRefusals = 256;

// Writes the 503, sends FIN, drops what the client sends for a moment (closing with unread input
// would reset the connection and could destroy the 503), then closes. `pending` counts refusals
// still running; past a bound, sockets close at once so a flood costs no more than it must.
// `pending` must outlive the io_context's handlers.
void RefuseConnection(boost::asio::ip::tcp::socket socket, std::atomic<int>& pending);

}  // namespace voxserve::transport::http
