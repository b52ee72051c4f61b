// What the postgres backends of voices and dictionaries share: a replica's in-memory copy of a
// table kept current through one LISTEN/NOTIFY channel, and the schema migrations they run.
//
// PgListener's thread owns one connection: on each (re)connection it prepares the schema, LISTENs,
// and re-reads everything; then again after each notification and every `resync_every` (the
// fallback for a missed one); when the database goes away it reconnects with backoff. Beside it,
// one request connection for the owner's writes, used one statement sequence at a time on the
// caller's thread, and replaced after the listener reconnected (the old socket may point at a
// server that has restarted since).
//
// Deadlines (PgConnection keeps them on the client): each of the listener's statements and
// (re)connections gets statement_timeout; a request gets statement_timeout for all of it, its
// wait for the request connection included. A request that times out or loses its connection
// makes the listener check its own connection at once, so a frozen database shows as
// disconnected (the owners' /health degraded, their calls 503) instead of looking alive.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/statusor.h"
#include "store/pg_connection.h"

namespace voxserve::store {

// A component's schema: its own version table (one row), migrations N = 1.. taking it from
// version N-1 to N (append only). `what` names it in messages ("voice", "dictionary").
// `rewrite`, when set, runs after the SQL migrations in the same transaction, given the version
// the database had: for what SQL cannot compute (a key that needs ICU).
struct PgSchema {
  const char* what;
  const char* version_table;
  std::span<const char* const> migrations;
  absl::Status (*rewrite)(PgConnection& connection, int from_version) = nullptr;
};

// Brings `schema` to its newest version in one transaction, under an advisory lock that every
// migration of every component takes (two replicas starting at once migrate once).
// FailedPrecondition when the database's version is newer than this server knows.
absl::Status PgMigrate(PgConnection& connection, const PgSchema& schema);

class PgListener {
 public:
  // Called on the listener's thread; they must not call the listener (Wake excepted).
  struct Hooks {
    std::function<absl::Status(PgConnection&)> prepare;  // after connecting, before LISTEN
    std::function<absl::Status(PgConnection&)> resync;   // re-reads everything
    // After each attempt to connect and on each loss: problem empty when connected.
    std::function<void(bool connected, const std::string& problem)> state;
    std::function<void()> notified;  // optional: notifications arrived (metrics)
  };

  // Starts the thread. `log_name` prefixes its log lines ("voices", "dictionaries").
  static absl::StatusOr<std::unique_ptr<PgListener>> Start(std::string dsn, PgSessionLimits limits,
                                                           std::string channel,
                                                           std::chrono::milliseconds resync_every,
                                                           std::string log_name, Hooks hooks);
  ~PgListener();  // stops and joins the thread: no hook runs after it returns

  // The listener checks its connection (and resyncs) at once.
  void Wake() const;

  // Runs `work` on the request connection ((re)connecting it first when needed), all of it
  // within statement_timeout from now. Returns Unavailable when it cannot connect or wait its
  // turn in time, else what `work` returned; a connection that broke or timed out under `work`
  // is dropped and the listener checks its own. Safe cross thread.
  absl::Status WithRequestConnection(const std::function<absl::Status(PgConnection&)>& work);

  // WithRequestConnection for work returning absl::StatusOr<T>.
  template <typename Work>
  auto Request(Work&& work) -> decltype(work(std::declval<PgConnection&>())) {
    std::optional<decltype(work(std::declval<PgConnection&>()))> result;
    absl::Status status = WithRequestConnection([&](PgConnection& c) {
      result.emplace(work(c));
      return result->status();
    });
    if (!result) return status;
    return *std::move(result);
  }

 private:
  PgListener(std::string dsn, PgSessionLimits limits, std::string channel,
             std::chrono::milliseconds resync_every, std::string log_name, Hooks hooks);
  void Loop();
  std::chrono::milliseconds CallTimeout() const {
    return std::chrono::milliseconds(limits_.statement_timeout_ms);
  }

  const std::string dsn_;
  const PgSessionLimits limits_;
  const std::string channel_;
  const std::chrono::milliseconds resync_every_;
  const std::string log_name_;
  const Hooks hooks_;
  std::atomic<uint64_t> generation_{0};  // listener connections so far
  std::atomic<bool> stopping_{false};
  std::atomic<bool> check_requested_{false};  // a request's connection failed: probe ours
  int wake_fd_ = -1;  // eventfd: wakes the listener to stop or to reconnect at once

  std::timed_mutex request_mutex_;                    // one request statement sequence at a time
  std::unique_ptr<PgConnection> request_connection_;  // guarded by request_mutex_
  uint64_t request_generation_ = 0;                   // guarded by request_mutex_

  std::thread thread_;
};

}  // namespace voxserve::store
