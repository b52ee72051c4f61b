#include "store/pg_listener.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "core/error.h"
#include "spdlog/spdlog.h"

namespace voxserve::store {
namespace {

using Clock = std::chrono::steady_clock;

// pg_advisory_xact_lock key taken by every migration (the voices' since schema version 1).
constexpr const char* kMigrationLock = "7305041001";
// Reconnect backoff: quick at first (a database restart takes about a second), at most 5 s.
constexpr auto kFirstBackoff = std::chrono::milliseconds(200);
constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);

}  // namespace

absl::Status PgMigrate(PgConnection& c, const PgSchema& schema) {
  if (absl::Status s = c.Run("BEGIN"); !s.ok()) return s;
  auto fail = [&c](absl::Status status) {
    if (!c.broken()) (void)c.Run("ROLLBACK");
    return status;
  };
  if (absl::Status s = c.Run("SELECT pg_advisory_xact_lock($1)", {{kMigrationLock}}); !s.ok()) {
    return fail(s);
  }
  const std::string table = schema.version_table;
  if (absl::Status s = c.Run("CREATE TABLE IF NOT EXISTS " + table + " (version integer NOT NULL)");
      !s.ok()) {
    return fail(s);
  }
  auto current = c.Exec("SELECT coalesce(max(version), 0) FROM " + table);
  if (!current.ok()) return fail(current.status());
  const int version = std::atoi(PgText(current->get(), 0, 0).c_str());
  const int newest = static_cast<int>(schema.migrations.size());
  if (version > newest) {
    return fail(absl::FailedPreconditionError(
        absl::StrCat("the database's ", schema.what, " schema is version ", version,
                     "; this server knows up to ", newest, " (upgrade voxserve)")));
  }
  for (int next = version + 1; next <= newest; ++next) {
    if (absl::Status s = c.Run(schema.migrations[next - 1]); !s.ok()) return fail(s);
    spdlog::info("PostgreSQL: the {} schema migrated to version {}", schema.what, next);
  }
  if (version < newest && schema.rewrite != nullptr) {
    if (absl::Status s = schema.rewrite(c, version); !s.ok()) return fail(s);
  }
  if (version < newest) {
    if (absl::Status s = c.Run("DELETE FROM " + table); !s.ok()) return fail(s);
    if (absl::Status s =
            c.Run("INSERT INTO " + table + " (version) VALUES ($1)", {{std::to_string(newest)}});
        !s.ok()) {
      return fail(s);
    }
  }
  return c.Run("COMMIT");
}

absl::StatusOr<std::unique_ptr<PgListener>> PgListener::Start(
    std::string dsn, PgSessionLimits limits, std::string channel,
    std::chrono::milliseconds resync_every, std::string log_name, Hooks hooks) {
  std::unique_ptr<PgListener> listener(new PgListener(std::move(dsn), limits, std::move(channel),
                                                      resync_every, std::move(log_name),
                                                      std::move(hooks)));
  if (listener->wake_fd_ < 0)
    return core::Internal(listener->log_name_ + ": cannot create an eventfd");
  listener->thread_ = std::thread([raw = listener.get()] { raw->Loop(); });
  return listener;
}

PgListener::PgListener(std::string dsn, PgSessionLimits limits, std::string channel,
                       std::chrono::milliseconds resync_every, std::string log_name, Hooks hooks)
    : dsn_(std::move(dsn)),
      limits_(limits),
      channel_(std::move(channel)),
      resync_every_(resync_every),
      log_name_(std::move(log_name)),
      hooks_(std::move(hooks)),
      wake_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

PgListener::~PgListener() {
  stopping_ = true;
  Wake();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void PgListener::Wake() const {
  if (wake_fd_ < 0) return;
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof one);
}

void PgListener::Loop() {
  std::unique_ptr<PgConnection> connection;
  auto backoff = kFirstBackoff;
  Clock::time_point next_resync = Clock::now();
  auto wait = [this](int fd, std::chrono::milliseconds timeout) {
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {fd, POLLIN, 0}};
    ::poll(fds, fd >= 0 ? 2 : 1, static_cast<int>(timeout.count()));
    uint64_t drained = 0;
    [[maybe_unused]] ssize_t n = ::read(wake_fd_, &drained, sizeof drained);
  };
  while (!stopping_) {
    if (!connection) {
      auto connected = PgConnection::Connect(dsn_, limits_, Clock::now() + CallTimeout());
      absl::Status status = connected.status();
      if (status.ok()) {
        connection = *std::move(connected);
        status = hooks_.prepare(*connection);
        if (status.ok()) status = connection->Run("LISTEN " + channel_);
        // LISTEN before the first read: a change committed in between is then both read and
        // notified, never missed.
        if (status.ok()) status = hooks_.resync(*connection);
      }
      if (!status.ok()) {
        connection.reset();
        hooks_.state(false, std::string(status.message()));
        wait(-1, std::chrono::duration_cast<std::chrono::milliseconds>(backoff));
        backoff = std::min(backoff * 2, kMaxBackoff);
        continue;
      }
      backoff = kFirstBackoff;
      ++generation_;
      hooks_.state(true, "");
      next_resync = Clock::now() + resync_every_;
    }
    auto until = std::chrono::duration_cast<std::chrono::milliseconds>(next_resync - Clock::now());
    wait(PQsocket(connection->raw()), std::max(until, std::chrono::milliseconds(0)));
    if (stopping_) break;
    if (PQconsumeInput(connection->raw()) == 0 || connection->broken()) {
      std::string why = PQerrorMessage(connection->raw());
      while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
      connection.reset();
      hooks_.state(false, "connection lost: " + why);
      continue;
    }
    if (check_requested_.exchange(false)) {
      // A request's call failed: is ours alive? A frozen server answers nothing, and this probe
      // times out like the request did.
      if (absl::Status status = connection->Run("SELECT 1"); !status.ok()) {
        connection.reset();
        hooks_.state(false, std::string(status.message()));
        continue;
      }
    }
    bool changed = false;
    while (PGnotify* notify = PQnotifies(connection->raw())) {
      changed = true;
      PQfreemem(notify);
    }
    if (changed && hooks_.notified) hooks_.notified();
    if (changed || Clock::now() >= next_resync) {
      if (absl::Status status = hooks_.resync(*connection); !status.ok()) {
        connection.reset();
        hooks_.state(false, std::string(status.message()));
        continue;
      }
      next_resync = Clock::now() + resync_every_;
    }
  }
}

absl::Status PgListener::WithRequestConnection(
    const std::function<absl::Status(PgConnection&)>& work) {
  const Clock::time_point deadline = Clock::now() + CallTimeout();
  std::unique_lock lock(request_mutex_, std::defer_lock);
  if (!lock.try_lock_until(deadline)) {
    return core::StoreUnavailable(
        "PostgreSQL: the calls before this one did not finish within statement_timeout (" +
            std::to_string(limits_.statement_timeout_ms) + " ms)",
        1);
  }
  // After the listener reconnected, the old request connection is a stale socket to a server
  // that may have restarted: replace it before use rather than fail the first request.
  const uint64_t generation = generation_.load();
  if (!request_connection_ || request_connection_->broken() || request_generation_ != generation) {
    request_connection_.reset();
    auto connected = PgConnection::Connect(dsn_, limits_, deadline);
    if (!connected.ok()) {
      check_requested_ = true;
      Wake();
      return connected.status();
    }
    request_connection_ = *std::move(connected);
    request_generation_ = generation;
  }
  request_connection_->set_deadline(deadline);
  absl::Status status = work(*request_connection_);
  request_connection_->set_deadline(std::nullopt);
  if (!status.ok() && request_connection_->broken()) {
    request_connection_.reset();
    check_requested_ = true;
    Wake();  // the listener checks its own at once
  }
  return status;
}

}  // namespace voxserve::store
