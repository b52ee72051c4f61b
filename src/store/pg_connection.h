// A thin RAII layer over libpq (Debian's libpq-dev): one connection, parameterized statements
// with text or binary values, results that free themselves, and errors as absl::Status with the
// SQLSTATE kept. Not safe cross thread: one owner at a time.
//
// Every call has a deadline kept here, on the client. The server's statement_timeout cannot
// bound a server that is frozen (a stopped process, a paused VM, a partition that leaves TCP
// open): the kernel keeps acknowledging, nothing answers, and a blocking libpq call would wait
// for ever. So the connection is non-blocking and each call polls its socket until the deadline;
// a call past it abandons the connection (broken() from then on).
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::store {

struct PgResultDeleter {
  void operator()(PGresult* result) const { PQclear(result); }
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

// One statement parameter: text, or binary (bytea) when `binary`.
struct PgParam {
  std::string_view value;
  bool binary = false;
};

// Server-side bounds set on each session (as `-c` options at connection time).
struct PgSessionLimits {
  int statement_timeout_ms = 10'000;
  // PostgreSQL ends a session that sits idle inside a transaction this long, releasing its
  // locks: a replica stalled mid-transaction (stopped, cut off) cannot block the others longer.
  int idle_in_transaction_timeout_ms = 5'000;
};

class PgConnection {
 public:
  using Clock = std::chrono::steady_clock;

  // Connects with `dsn` (a libpq keyword string or URI). connect_timeout, TCP keepalives
  // (a dead peer noticed in about 25 s, see pg_connection.cc) and `limits` are defaults: what
  // the DSN sets wins, and the DSN's `options` (or PGOPTIONS) are kept, after ours. Unavailable
  // (the server is unreachable, refused us, or did not finish the handshake by `deadline`).
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(const std::string& dsn,
                                                               const PgSessionLimits& limits,
                                                               Clock::time_point deadline);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement. Binary results when `binary_result`. Errors: Unavailable when the
  // connection is lost or the statement is not answered by the deadline (broken() is then
  // true), else Internal with the server's message; sqlstate() says which (e.g. "23505" for a
  // unique violation). The deadline: the one set by set_deadline, else statement_timeout from
  // now.
  absl::StatusOr<PgResult> Exec(std::string_view sql, const std::vector<PgParam>& params = {},
                                bool binary_result = false);
  // Exec for statements whose rows do not matter.
  absl::Status Run(std::string_view sql, const std::vector<PgParam>& params = {});

  // One deadline for every statement until it is cleared (a caller's whole transaction).
  void set_deadline(std::optional<Clock::time_point> deadline) { deadline_ = deadline; }

  bool broken() const;
  const std::string& sqlstate() const { return sqlstate_; }  // of the last failed Exec
  PGconn* raw() { return conn_; }

 private:
  PgConnection(PGconn* conn, const PgSessionLimits& limits) : conn_(conn), limits_(limits) {}
  // Waits until the socket is ready for `events` or the deadline passes (false then).
  bool WaitFor(short events, Clock::time_point deadline) const;
  absl::Status Abandon(std::string_view during);

  PGconn* conn_;
  const PgSessionLimits limits_;
  std::optional<Clock::time_point> deadline_;
  bool abandoned_ = false;  // a call ran past its deadline: the connection's state is unknown
  std::string sqlstate_;
};

// A text column of row `row`.
std::string PgText(const PGresult* result, int row, int column);

}  // namespace voxserve::store
