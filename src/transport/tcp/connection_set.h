// The open connections of one front end (HTTP sessions, WebSockets, Wyoming clients), for its
// connection limit, its drain and its stop. A connection is open from Add until it is destroyed;
// its destructor calls Closed() (through whatever environment the protocol hands it), which
// wakes WaitClosed. Safe cross thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

namespace voxserve::transport::tcp {

// Connection has Start(); Drain() (finish what was started, then close) where it can drain.
template <typename Connection>
class ConnectionSet {
 public:
  // Makes a connection with `make`, tracks it and starts it, unless `limit` connections are open:
  // then null, and `make` is not called (the caller still holds what it would have taken, to
  // refuse with). A connection added while draining is drained as soon as it has started.
  template <typename Make>
  std::shared_ptr<Connection> Add(Make&& make,
                                  size_t limit = std::numeric_limits<size_t>::max()) {
    std::shared_ptr<Connection> connection;
    bool drain = false;
    {
      std::lock_guard lock(mutex_);
      if (OpenLocked() >= limit) return nullptr;
      connection = make();
      connections_.push_back(connection);
      drain = draining_;
    }
    connection->Start();
    if constexpr (requires { connection->Drain(); }) {
      if (drain) connection->Drain();
    }
    return connection;
  }

  size_t open() const {
    std::lock_guard lock(mutex_);
    return OpenLocked();
  }

  // From then on every connection is drained, those open now at once. False (and nothing done)
  // when the set was draining already.
  bool Drain() {
    std::vector<std::shared_ptr<Connection>> live;
    {
      std::lock_guard lock(mutex_);
      if (draining_) return false;
      draining_ = true;
      live = LiveLocked();
    }
    for (const auto& connection : live) connection->Drain();
    return true;
  }

  // The connections still open, to close or shut down (outside the set's lock).
  std::vector<std::shared_ptr<Connection>> Live() const {
    std::lock_guard lock(mutex_);
    return LiveLocked();
  }

  // From a connection's destructor.
  void Closed() {
    std::lock_guard lock(mutex_);
    all_closed_.notify_all();
  }

  // Up to `timeout` until every connection is destroyed; true when all are.
  bool WaitClosed(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return all_closed_.wait_for(lock, timeout, [this] { return OpenLocked() == 0; });
  }

 private:
  size_t OpenLocked() const {
    std::erase_if(connections_, [](const auto& weak) { return weak.expired(); });
    return connections_.size();
  }
  std::vector<std::shared_ptr<Connection>> LiveLocked() const {
    std::vector<std::shared_ptr<Connection>> live;
    for (const auto& weak : connections_) {
      if (auto connection = weak.lock()) live.push_back(std::move(connection));
    }
    return live;
  }

  mutable std::mutex mutex_;
  std::condition_variable all_closed_;
  mutable std::vector<std::weak_ptr<Connection>> connections_;  // pruned as they expire
  bool draining_ = false;
};

}  // namespace voxserve::transport::tcp
