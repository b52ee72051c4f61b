// Keep-alive connections to one endpoint, bounded: at most `max_open` connections exist at once
// (lent out or idle); a caller finding none free waits for one until its deadline.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "client/http_connection.h"

namespace voxserve::client {

class ConnectionPool;

// A connection lent by the pool; returns it (kept when reusable) or frees its slot on destruction.
class PooledConnection {
 public:
  PooledConnection() = default;
  PooledConnection(ConnectionPool* pool, std::unique_ptr<HttpConnection> connection, bool reused);
  PooledConnection(PooledConnection&& other) noexcept;
  PooledConnection& operator=(PooledConnection&& other) noexcept;
  ~PooledConnection();

  HttpConnection* operator->() const { return connection_.get(); }
  bool reused() const { return reused_; }  // was idle in the pool: the server may have closed it

 private:
  ConnectionPool* pool_ = nullptr;
  std::unique_ptr<HttpConnection> connection_;
  bool reused_ = false;
};

struct PoolSettings {
  size_t max_open = 64;
  Millis idle_timeout{50000};
  std::string server_name;  // TLS
  bool verify_peer = true;
};

// Safe cross thread.
class ConnectionPool {
 public:
  // `tls` null: plain HTTP. The endpoint and TLS context outlive the pool.
  ConnectionPool(const Endpoint& endpoint, boost::asio::ssl::context* tls, PoolSettings settings);

  // An idle connection (most recently used first) or a new one (connected by `connect_deadline`).
  // `fresh`: never an idle one. Errors: Connect's, or kTimeout when no slot frees up by `deadline`.
  Outcome Acquire(Deadline deadline, Deadline connect_deadline, bool fresh,
                  PooledConnection* lease);

 private:
  friend class PooledConnection;
  void Return(std::unique_ptr<HttpConnection> connection);

  const Endpoint& endpoint_;
  boost::asio::ssl::context* const tls_;
  const PoolSettings settings_;
  std::mutex mutex_;
  std::condition_variable slot_freed_;
  size_t open_ = 0;  // lent out + idle
  std::vector<std::unique_ptr<HttpConnection>> idle_;
};

}  // namespace voxserve::client
