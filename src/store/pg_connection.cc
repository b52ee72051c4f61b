#include "store/pg_connection.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "core/error.h"
#include "spdlog/spdlog.h"

namespace voxserve::store {
namespace {

std::string Trimmed(const char* message) {
  std::string text = message != nullptr ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The `options` the user gave: the DSN's, else PGOPTIONS (which libpq would have used had we
// not passed `options` ourselves). Empty when neither, or when the DSN does not parse (libpq
// then reports that itself when connecting).
std::string UserOptions(const std::string& dsn) {
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(dsn.c_str(), &error);
  if (error != nullptr) PQfreemem(error);
  std::string options;
  bool given = false;
  for (PQconninfoOption* option = parsed; option != nullptr && option->keyword != nullptr;
       ++option) {
    if (std::string_view(option->keyword) == "options" && option->val != nullptr) {
      options = option->val;
      given = true;
    }
  }
  if (parsed != nullptr) PQconninfoFree(parsed);
  if (!given) {
    if (const char* env = std::getenv("PGOPTIONS")) options = env;
  }
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(const std::string& dsn,
                                                                    const PgSessionLimits& limits,
                                                                    Clock::time_point deadline) {
  // Server-side bounds first: a later `-c` of the same setting (the user's) wins.
  std::string options = "-c statement_timeout=" + std::to_string(limits.statement_timeout_ms) +
                        " -c idle_in_transaction_session_timeout=" +
                        std::to_string(limits.idle_in_transaction_timeout_ms);
  if (std::string user = UserOptions(dsn); !user.empty()) options += " " + user;
  // Keywords before "dbname" are defaults: libpq lets the expanded DSN override them; "options",
  // after it, is the merged value. TCP keepalives: without them a connection whose peer vanished
  // (machine lost, network split) looks alive for hours (the kernel's 2 h default); probes after
  // 10 s idle, every 5 s, 3 unanswered: gone after about 25 s. tcp_user_timeout gives the same
  // bound to data sent and never acknowledged, where keepalives do not apply.
  const std::pair<const char*, const char*> parameters[] = {
      {"connect_timeout", "5"},      {"application_name", "voxserve"}, {"keepalives", "1"},
      {"keepalives_idle", "10"},     {"keepalives_interval", "5"},     {"keepalives_count", "3"},
      {"tcp_user_timeout", "25000"}, {"dbname", dsn.c_str()},          {"options", options.c_str()},
  };
  std::vector<const char*> keywords;
  std::vector<const char*> values;
  for (const auto& [keyword, value] : parameters) {
    keywords.push_back(keyword);
    values.push_back(value);
  }
  keywords.push_back(nullptr);
  values.push_back(nullptr);
  // The handshake step by step (PQconnectPoll), so that a server that accepts TCP and then
  // says nothing costs no more than the deadline.
  PGconn* conn = PQconnectStartParams(keywords.data(), values.data(), /*expand_dbname=*/1);
  if (conn == nullptr) return core::StoreUnavailable("PostgreSQL: out of memory", 1);
  std::unique_ptr<PgConnection> connection(new PgConnection(conn, limits));
  // NOTICEs (e.g. "relation already exists, skipping") go to the log, not raw to stderr.
  PQsetNoticeProcessor(
      conn,
      [](void*, const char* message) { spdlog::debug("voices: PostgreSQL: {}", Trimmed(message)); },
      nullptr);
  PostgresPollingStatusType step =
      PQstatus(conn) == CONNECTION_BAD ? PGRES_POLLING_FAILED : PGRES_POLLING_WRITING;
  while (step != PGRES_POLLING_OK && step != PGRES_POLLING_FAILED) {
    if (!connection->WaitFor(step == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline)) {
      connection->abandoned_ = true;
      return core::StoreUnavailable(
          "cannot connect to PostgreSQL: no answer within the timeout (the server is frozen or "
          "unreachable)",
          1);
    }
    step = PQconnectPoll(conn);
  }
  if (step == PGRES_POLLING_FAILED || PQstatus(conn) != CONNECTION_OK) {
    return core::StoreUnavailable("cannot connect to PostgreSQL: " + Trimmed(PQerrorMessage(conn)),
                                  1);
  }
  // Non-blocking from here: sends that would block are polled under a deadline, and PQfinish
  // does not wait on a peer that reads nothing.
  if (PQsetnonblocking(conn, 1) != 0) {
    return core::StoreUnavailable("PostgreSQL: " + Trimmed(PQerrorMessage(conn)), 1);
  }
  return connection;
}

bool PgConnection::WaitFor(short events, Clock::time_point deadline) const {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd fd = {PQsocket(conn_), events, 0};
    if (fd.fd < 0) return true;  // no socket: libpq reports the failure itself
    const int ready = ::poll(&fd, 1, static_cast<int>(std::min<long long>(left, 60'000)));
    if (ready != 0 && !(ready < 0 && errno == EINTR)) return true;
  }
}

absl::Status PgConnection::Abandon(std::string_view during) {
  abandoned_ = true;
  return core::StoreUnavailable("PostgreSQL did not answer " + std::string(during) +
                                    " in time (statement_timeout " +
                                    std::to_string(limits_.statement_timeout_ms) +
                                    " ms): the server is frozen, overloaded or cut off",
                                1);
}

PgConnection::~PgConnection() { PQfinish(conn_); }

bool PgConnection::broken() const { return abandoned_ || PQstatus(conn_) != CONNECTION_OK; }

absl::StatusOr<PgResult> PgConnection::Exec(std::string_view sql,
                                            const std::vector<PgParam>& params,
                                            bool binary_result) {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  std::vector<std::string> texts;  // text values need a terminating NUL
  texts.reserve(params.size());
  for (const PgParam& param : params) {
    if (param.binary) {
      values.push_back(param.value.data());
    } else {
      texts.emplace_back(param.value);
      values.push_back(texts.back().c_str());
    }
    lengths.push_back(static_cast<int>(param.value.size()));
    formats.push_back(param.binary ? 1 : 0);
  }
  const std::string statement(sql);
  sqlstate_.clear();
  if (abandoned_) return core::StoreUnavailable("PostgreSQL connection abandoned", 1);
  const Clock::time_point deadline =
      deadline_.value_or(Clock::now() + std::chrono::milliseconds(limits_.statement_timeout_ms));
  if (PQsendQueryParams(conn_, statement.c_str(), static_cast<int>(params.size()), nullptr,
                        values.data(), lengths.data(), formats.data(),
                        binary_result ? 1 : 0) == 0) {
    return core::StoreUnavailable("PostgreSQL connection lost: " + Trimmed(PQerrorMessage(conn_)),
                                  1);
  }
  // Send (a large bytea may not fit the socket buffer at once), reading while we wait: the
  // server may be sending too.
  for (int flushed; (flushed = PQflush(conn_)) != 0;) {
    if (flushed < 0) {
      return core::StoreUnavailable("PostgreSQL connection lost: " + Trimmed(PQerrorMessage(conn_)),
                                    1);
    }
    if (!WaitFor(POLLIN | POLLOUT, deadline)) return Abandon("a statement being sent");
    if (PQconsumeInput(conn_) == 0) break;  // the error surfaces as the result below
  }
  // One statement gives one result (PQexecParams allows no more); keep the first, drain the
  // rest (none) so the connection is ready for the next call.
  PgResult result;
  while (true) {
    while (PQisBusy(conn_) != 0) {
      if (!WaitFor(POLLIN, deadline)) return Abandon("a statement");
      if (PQconsumeInput(conn_) == 0) break;
    }
    PGresult* next = PQgetResult(conn_);
    if (next == nullptr) break;
    if (!result) {
      result.reset(next);
    } else {
      PQclear(next);
    }
    if (PQstatus(conn_) == CONNECTION_BAD) break;
  }
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
    return absl::StatusOr<PgResult>(std::move(result));
  }
  if (result) {
    if (const char* state = PQresultErrorField(result.get(), PG_DIAG_SQLSTATE)) sqlstate_ = state;
  }
  std::string why = Trimmed(result ? PQresultErrorMessage(result.get()) : PQerrorMessage(conn_));
  if (why.empty()) why = Trimmed(PQerrorMessage(conn_));
  // Class 08 is a connection exception, 57P01..03 the server shutting down or not ready, 57014
  // a statement cancelled by statement_timeout (a database too slow to answer).
  if (broken() || sqlstate_.starts_with("08") || sqlstate_.starts_with("57P") ||
      sqlstate_ == "57014") {
    return core::StoreUnavailable("PostgreSQL connection lost: " + why, 1);
  }
  return core::Internal("PostgreSQL: " + why);
}

absl::Status PgConnection::Run(std::string_view sql, const std::vector<PgParam>& params) {
  auto result = Exec(sql, params);
  return result.ok() ? absl::OkStatus() : result.status();
}

std::string PgText(const PGresult* result, int row, int column) {
  return std::string(PQgetvalue(result, row, column),
                     static_cast<size_t>(PQgetlength(result, row, column)));
}

}  // namespace voxserve::store
