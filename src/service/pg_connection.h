// A thin RAII layer over libpq (Debian's libpq-dev): one connection, parameterized statements
// with text or binary values, results that free themselves, and errors as absl::Status with the
// SQLSTATE kept. Not safe cross thread: one owner at a time.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace voxserve::service {

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
  // Connects with `dsn` (a libpq keyword string or URI). connect_timeout, TCP keepalives
  // (a dead peer noticed in about 25 s, see pg_connection.cc) and `limits` are defaults: what
  // the DSN sets wins, and the DSN's `options` (or PGOPTIONS) are kept, after ours. Unavailable
  // (the server is unreachable or refused us).
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(const std::string& dsn,
                                                               const PgSessionLimits& limits);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement. Binary results when `binary_result`. Errors: Unavailable when the
  // connection is lost (broken() is then true), else Internal with the server's message;
  // sqlstate() says which (e.g. "23505" for a unique violation).
  absl::StatusOr<PgResult> Exec(std::string_view sql, const std::vector<PgParam>& params = {},
                                bool binary_result = false);
  // Exec for statements whose rows do not matter.
  absl::Status Run(std::string_view sql, const std::vector<PgParam>& params = {});

  bool broken() const;
  const std::string& sqlstate() const { return sqlstate_; }  // of the last failed Exec
  PGconn* raw() { return conn_; }

 private:
  explicit PgConnection(PGconn* conn) : conn_(conn) {}
  PGconn* conn_;
  std::string sqlstate_;
};

// A text column of row `row`.
std::string PgText(const PGresult* result, int row, int column);

}  // namespace voxserve::service
