#include "client/connection_pool.h"

namespace voxserve::client {

PooledConnection::PooledConnection(ConnectionPool* pool, std::unique_ptr<HttpConnection> connection,
                                   bool reused)
    : pool_(pool), connection_(std::move(connection)), reused_(reused) {}

PooledConnection::PooledConnection(PooledConnection&& other) noexcept { *this = std::move(other); }

PooledConnection& PooledConnection::operator=(PooledConnection&& other) noexcept {
  if (this != &other) {
    if (pool_ != nullptr) pool_->Return(std::move(connection_));
    pool_ = std::exchange(other.pool_, nullptr);
    connection_ = std::move(other.connection_);
    reused_ = other.reused_;
  }
  return *this;
}

PooledConnection::~PooledConnection() {
  if (pool_ != nullptr) pool_->Return(std::move(connection_));
}

ConnectionPool::ConnectionPool(const Endpoint& endpoint, boost::asio::ssl::context* tls,
                               PoolSettings settings)
    : endpoint_(endpoint), tls_(tls), settings_(std::move(settings)) {}

Outcome ConnectionPool::Acquire(Deadline deadline, Deadline connect_deadline, bool fresh,
                                PooledConnection* lease) {
  std::unique_lock lock(mutex_);
  while (true) {
    while (!idle_.empty()) {
      std::unique_ptr<HttpConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      if (!fresh && Clock::now() - connection->idle_since() < settings_.idle_timeout) {
        *lease = PooledConnection(this, std::move(connection), true);
        return {};
      }
      --open_;  // too old (or a fresh one is wanted): close it, which frees its slot
      lock.unlock();
      connection.reset();
      lock.lock();
    }
    if (open_ < settings_.max_open) break;
    if (slot_freed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        Clock::now() >= deadline) {
      Outcome outcome =
          Outcome::Error(ErrorKind::kTimeout, "no connection to " + endpoint_.HostHeader() +
                                                  " came free in time (" +
                                                  std::to_string(settings_.max_open) + " open)");
      outcome.endpoint_neutral = true;
      return outcome;
    }
  }
  ++open_;  // reserved before connecting, so concurrent callers cannot overshoot max_open
  lock.unlock();
  Outcome error;
  std::unique_ptr<HttpConnection> connection =
      HttpConnection::Connect(endpoint_, tls_, settings_.server_name, settings_.verify_peer,
                              std::min(deadline, connect_deadline), &error);
  if (!connection) {
    lock.lock();
    --open_;
    slot_freed_.notify_one();
    return error;
  }
  *lease = PooledConnection(this, std::move(connection), false);
  return {};
}

void ConnectionPool::Return(std::unique_ptr<HttpConnection> connection) {
  bool keep = connection && connection->reusable();
  if (keep) connection->MarkIdle();
  {
    std::lock_guard lock(mutex_);
    if (keep) {
      idle_.push_back(std::move(connection));
    } else {
      --open_;
    }
  }
  slot_freed_.notify_one();
  // A connection not kept closes here, outside the lock.
}

}  // namespace voxserve::client
