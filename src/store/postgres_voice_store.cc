#include "store/postgres_voice_store.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/error.h"
#include "spdlog/spdlog.h"
#include "text/visible_text.h"

namespace voxserve::store {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kChannel = "voxserve_voices";
// pg_advisory_xact_lock key that serializes registrations across replicas so count and byte
// bounds hold (a registration is milliseconds; they are rare). Migrations: pg_listener.cc.
constexpr const char* kRegistrationLock = "7305041002";
constexpr int kRetryAfterSeconds = 2;

// Migration N (1-based) takes the schema from version N-1 to N. Append only.
constexpr const char* kMigrations[] = {
    // 1: the registry. name_key was the name in ASCII lower case (schema 2 changed it: below),
    // independent of the database's collation; bytes is octet_length(profile).
    "CREATE TABLE voxserve_voices ("
    " id text PRIMARY KEY,"
    " model text NOT NULL,"
    " name text NOT NULL,"
    " name_key text NOT NULL,"
    " family text NOT NULL,"
    " transcript text NOT NULL,"
    " created_at bigint NOT NULL,"
    " prompt_seconds double precision NOT NULL,"
    " bytes bigint NOT NULL,"
    " profile bytea NOT NULL,"
    " UNIQUE (model, name_key))",
    // 2: name_key becomes the name's NFKC_Casefold (text::LookAlikeKey: "é" and "e" + U+0301,
    // "Ｒace2" and "race2" are one name). SQL has no case folding that ignores the collation,
    // so RewriteNameKeys recomputes the keys in this migration's transaction.
    "COMMENT ON COLUMN voxserve_voices.name_key IS "
    "'the name''s NFKC_Casefold, unique per model (voxserve schema 2)'",
};
static_assert(std::size(kMigrations) == kVoiceSchemaVersion);

// Schema 2's keys for the rows written before it. Names registered apart that now read as one
// (both were allowed under ASCII-only folding) keep both voices: the oldest keeps the name, the
// others answer by id only, their key made unique with their id (a warning says which).
absl::Status RewriteNameKeys(PgConnection& c, int from_version) {
  if (from_version >= 2) return absl::OkStatus();
  auto rows =
      c.Exec("SELECT id, model, name, name_key FROM voxserve_voices ORDER BY created_at, id");
  if (!rows.ok()) return rows.status();
  struct Rekey {
    std::string id;
    std::string key;
  };
  std::vector<Rekey> changes;
  std::set<std::pair<std::string, std::string>> taken;  // (model, key)
  for (int row = 0; row < PQntuples(rows->get()); ++row) {
    std::string id = PgText(rows->get(), row, 0);
    std::string model = PgText(rows->get(), row, 1);
    std::string name = PgText(rows->get(), row, 2);
    std::string key = text::LookAlikeKey(name);
    if (!taken.emplace(model, key).second) {
      spdlog::warn(
          "voices: voice {} of model {} is named like an older voice ({}); it keeps answering "
          "by its id, not by name",
          id, model, core::Quoted(name));
      key += "\n" + id;
    }
    if (key != PgText(rows->get(), row, 3)) changes.push_back({std::move(id), std::move(key)});
  }
  // Two passes: a key may move to one another row still holds until its own turn.
  for (const char* statement : {"UPDATE voxserve_voices SET name_key = id || '\n' WHERE id = $1",
                                "UPDATE voxserve_voices SET name_key = $2 WHERE id = $1"}) {
    for (const Rekey& change : changes) {
      std::vector<PgParam> params = {{change.id}};
      if (std::string_view(statement).find("$2") != std::string_view::npos) {
        params.push_back({change.key});
      }
      if (absl::Status s = c.Run(statement, params); !s.ok()) return s;
    }
  }
  if (!changes.empty()) {
    spdlog::info("voices: {} name keys rewritten for schema 2", changes.size());
  }
  return absl::OkStatus();
}

constexpr PgSchema kSchema = {"voice", "voxserve_schema", kMigrations, RewriteNameKeys};

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string Unreachable(const std::string& problem) {
  return "the shared voice registry (PostgreSQL) is unreachable (" + problem +
         "); the server reconnects on its own, retry shortly";
}

}  // namespace

class PostgresVoiceStore::Reservation : public VoiceReservation {
 public:
  Reservation(PostgresVoiceStore* store, VoiceIndex::Hold hold)
      : VoiceReservation(hold.id), store_(store), hold_(std::move(hold)) {}
  ~Reservation() override {
    std::lock_guard lock(store_->mutex_);
    store_->index_.Release(hold_);
  }
  PostgresVoiceStore* store() const { return store_; }
  const std::string& key() const { return hold_.key; }

 private:
  PostgresVoiceStore* store_;
  VoiceIndex::Hold hold_;
};

absl::StatusOr<std::unique_ptr<PostgresVoiceStore>> PostgresVoiceStore::Create(
    VoiceStoreConfig config, VoiceStoreMetrics* metrics) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  auto dsn = config.PostgresDsn();
  if (!dsn.ok()) return dsn.status();
  std::unique_ptr<PostgresVoiceStore> store(
      new PostgresVoiceStore(std::move(config), *std::move(dsn), metrics));
  if (store->config_.postgres_idle_in_transaction_timeout_ms >=
      store->config_.postgres_statement_timeout_ms) {
    // Not an error: the bound still holds, but registrations waiting behind a stalled replica
    // give up (503) before the database frees its lock.
    spdlog::warn(
        "voices: voices.postgres.idle_in_transaction_timeout_ms ({}) is not below "
        "voices.postgres.statement_timeout_ms ({}): registrations waiting behind a stalled "
        "replica answer 503 before its lock is freed",
        store->config_.postgres_idle_in_transaction_timeout_ms,
        store->config_.postgres_statement_timeout_ms);
  }
  PostgresVoiceStore* raw = store.get();
  auto listener = PgListener::Start(
      raw->dsn_, raw->SessionLimits(), kChannel,
      std::chrono::milliseconds(raw->config_.postgres_resync_ms), "voices",
      {.prepare = [](PgConnection& c) { return PgMigrate(c, kSchema); },
       .resync = [raw](PgConnection& c) { return raw->Resync(c); },
       .state = [raw](bool connected,
                      const std::string& problem) { raw->SetConnected(connected, problem); },
       .notified =
           [raw] {
             if (raw->metrics_) raw->metrics_->notifications.WithLabels({"postgres"}).Increment();
           }});
  if (!listener.ok()) return listener.status();
  store->listener_ = *std::move(listener);
  return store;
}

PostgresVoiceStore::PostgresVoiceStore(VoiceStoreConfig config, std::string dsn,
                                       VoiceStoreMetrics* metrics)
    : config_(std::move(config)),
      dsn_(std::move(dsn)),
      metrics_(metrics),
      hold_next_commit_(config_.test_cloner && std::getenv("VOXSERVE_TEST_PG_HOLD_COMMIT")) {
  problem_ = "not connected yet";
  if (metrics_) metrics_->connected.WithLabels({"postgres"}).Set(0);
}

PostgresVoiceStore::~PostgresVoiceStore() { listener_.reset(); }

PgSessionLimits PostgresVoiceStore::SessionLimits() const {
  return {.statement_timeout_ms = config_.postgres_statement_timeout_ms,
          .idle_in_transaction_timeout_ms = config_.postgres_idle_in_transaction_timeout_ms};
}

void PostgresVoiceStore::SetConnected(bool connected, const std::string& problem) {
  const bool was = connected_.exchange(connected);
  {
    std::lock_guard lock(mutex_);
    problem_ = problem;
    if (connected) loaded_once_ = true;
  }
  connected_changed_.notify_all();
  if (metrics_) metrics_->connected.WithLabels({"postgres"}).Set(connected ? 1 : 0);
  if (connected && !was) spdlog::info("voices: connected to PostgreSQL");
  if (!connected && was) spdlog::warn("voices: PostgreSQL unreachable: {}", problem);
}

std::string PostgresVoiceStore::Problem() const {
  std::lock_guard lock(mutex_);
  return problem_.empty() ? std::string() : "voices.backend postgres: " + problem_;
}

bool PostgresVoiceStore::WaitUntilConnected(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  return connected_changed_.wait_for(lock, timeout,
                                     [this] { return connected_.load() && loaded_once_; });
}

absl::Status PostgresVoiceStore::Resync(PgConnection& c) {
  const Clock::time_point start = Clock::now();
  uint64_t snapshot = 0;  // local changes up to here committed before the query began
  {
    std::lock_guard lock(mutex_);
    snapshot = change_sequence_;
  }
  auto rows = c.Exec(
      "SELECT id, model, name, family, transcript, created_at, prompt_seconds, bytes "
      "FROM voxserve_voices ORDER BY created_at, id");
  if (!rows.ok()) {
    if (metrics_) metrics_->errors.WithLabels({"postgres", "resync"}).Increment();
    return rows.status();
  }
  std::vector<StoredVoice> loaded;
  std::vector<std::string> removed;  // known before, gone now: another replica deleted them
  const PGresult* r = rows->get();
  for (int row = 0; row < PQntuples(r); ++row) {
    StoredVoice voice;
    voice.metadata.id = PgText(r, row, 0);
    voice.metadata.model = PgText(r, row, 1);
    voice.metadata.name = PgText(r, row, 2);
    voice.metadata.family = PgText(r, row, 3);
    voice.metadata.transcript = PgText(r, row, 4);
    voice.metadata.created_at = std::strtoll(PQgetvalue(r, row, 5), nullptr, 10);
    voice.metadata.prompt_seconds = std::strtod(PQgetvalue(r, row, 6), nullptr);
    voice.file_bytes = std::strtoull(PQgetvalue(r, row, 7), nullptr, 10);
    loaded.push_back(std::move(voice));
  }
  {
    std::lock_guard lock(mutex_);
    std::vector<std::string> before;
    for (const auto& [id, voice] : index_.voices()) before.push_back(id);
    index_.Clear();
    // Oldest first: of names that read alike (from before schema 2), the oldest keeps the name.
    for (StoredVoice& voice : loaded) index_.Add(std::move(voice));
    std::erase_if(recent_, [snapshot](const LocalChange& c) { return c.sequence <= snapshot; });
    for (const LocalChange& change : recent_) {
      if (change.voice) {
        index_.Add(*change.voice);
      } else {
        index_.Remove(change.id);
      }
    }
    for (const std::string& id : before) {
      if (!index_.Contains(id) && !deleting_.contains(id)) removed.push_back(id);
    }
  }
  ReportRemovedElsewhere(removed);
  if (metrics_) {
    metrics_->operation_seconds.WithLabels({"postgres", "resync"}).Observe(SecondsSince(start));
  }
  return absl::OkStatus();
}

void PostgresVoiceStore::SetOnRemovedElsewhere(std::function<void(const std::string& id)> removed) {
  std::lock_guard lock(removed_mutex_);
  removed_elsewhere_ = std::move(removed);
}

void PostgresVoiceStore::ReportRemovedElsewhere(const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  std::lock_guard lock(removed_mutex_);
  if (!removed_elsewhere_) return;
  for (const std::string& id : ids) removed_elsewhere_(id);
}

bool PostgresVoiceStore::RecordLocalChange(const std::string& id,
                                           std::optional<StoredVoice> voice) {
  std::lock_guard lock(mutex_);
  const bool was_known = index_.Contains(id);
  if (voice) {
    index_.Add(*voice);
  } else {
    index_.Remove(id);
  }
  recent_.push_back({++change_sequence_, id, std::move(voice)});
  return was_known;
}

template <typename Work>
auto PostgresVoiceStore::OnRequestConnection(const char* operation, Work&& work) const
    -> decltype(work(std::declval<PgConnection&>())) {
  if (!connected_.load()) {
    if (metrics_) metrics_->errors.WithLabels({"postgres", operation}).Increment();
    std::lock_guard lock(mutex_);
    return core::StoreUnavailable(Unreachable(problem_), kRetryAfterSeconds);
  }
  const Clock::time_point start = Clock::now();
  auto result = listener_->Request(std::forward<Work>(work));
  const bool store_fault =
      !result.ok() && (result.status().code() == absl::StatusCode::kUnavailable ||
                       result.status().code() == absl::StatusCode::kInternal);
  if (store_fault && metrics_) metrics_->errors.WithLabels({"postgres", operation}).Increment();
  if (metrics_) {
    metrics_->operation_seconds.WithLabels({"postgres", operation}).Observe(SecondsSince(start));
  }
  return result;
}

absl::StatusOr<std::unique_ptr<VoiceReservation>> PostgresVoiceStore::Reserve(
    std::string_view model, std::string_view name) {
  if (absl::Status status = ValidateVoiceName(name); !status.ok()) return status;
  std::lock_guard lock(mutex_);
  if (!connected_.load()) return core::StoreUnavailable(Unreachable(problem_), kRetryAfterSeconds);
  auto hold = index_.Reserve(model, name, config_.max_count);
  if (!hold.ok()) return hold.status();
  return std::unique_ptr<VoiceReservation>(new Reservation(this, *std::move(hold)));
}

absl::StatusOr<StoredVoice> PostgresVoiceStore::Insert(PgConnection& c, const StoredVoice& voice,
                                                       std::string_view encoded,
                                                       bool hold_before_commit) const {
  const VoiceMetadata& m = voice.metadata;
  if (absl::Status s = c.Run("BEGIN"); !s.ok()) return s;
  auto fail = [&c](absl::Status status) -> absl::StatusOr<StoredVoice> {
    if (!c.broken()) (void)c.Run("ROLLBACK");
    return status;
  };
  if (absl::Status s = c.Run("SELECT pg_advisory_xact_lock($1)", {{kRegistrationLock}}); !s.ok()) {
    return fail(s);
  }
  auto totals = c.Exec("SELECT count(*), coalesce(sum(bytes), 0) FROM voxserve_voices");
  if (!totals.ok()) return fail(totals.status());
  const long long count = std::strtoll(PQgetvalue(totals->get(), 0, 0), nullptr, 10);
  const unsigned long long bytes = std::strtoull(PQgetvalue(totals->get(), 0, 1), nullptr, 10);
  if (count >= config_.max_count) {
    return fail(core::InsufficientStorage(
        "the voice store is full (voices.max_count = " + std::to_string(config_.max_count) +
            "); delete a voice first",
        "voice_limit_reached"));
  }
  if (bytes + encoded.size() > config_.max_bytes) {
    return fail(core::InsufficientStorage(
        "the voice store is full (voices.max_bytes = " + std::to_string(config_.max_bytes) +
            "); delete a voice first",
        "voice_storage_full"));
  }
  auto inserted = c.Exec(
      "INSERT INTO voxserve_voices (id, model, name, name_key, family, transcript, created_at, "
      "prompt_seconds, bytes, profile) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
      {{m.id},
       {m.model},
       {m.name},
       {text::LookAlikeKey(m.name)},
       {m.family},
       {m.transcript},
       {std::to_string(m.created_at)},
       {absl::StrFormat("%.17g", m.prompt_seconds)},
       {std::to_string(encoded.size())},
       {encoded, /*binary=*/true}});
  if (!inserted.ok()) {
    if (c.sqlstate() == "23505") {  // unique_violation: another replica registered it first
      return fail(core::AlreadyExists("model '" + m.model + "' already has a voice named " +
                                          core::Quoted(m.name) + " (or id " + m.id + ")",
                                      "name", "voice_name_taken"));
    }
    return fail(inserted.status());
  }
  if (absl::Status s = c.Run("SELECT pg_notify($1, $2)", {{kChannel}, {"add " + m.id}}); !s.ok()) {
    return fail(s);
  }
  if (hold_before_commit) {
    spdlog::warn("voices: TEST holding registration {} before COMMIT", m.id);
    pollfd fd = {PQsocket(c.raw()), POLLIN, 0};
    ::poll(&fd, 1, 60'000);  // readable: the server closed the connection (or said something)
  }
  if (absl::Status s = c.Run("COMMIT"); !s.ok()) return fail(s);
  return voice;
}

absl::StatusOr<StoredVoice> PostgresVoiceStore::Commit(VoiceReservation& held,
                                                       std::string_view model,
                                                       std::string_view name,
                                                       VoiceMetadata metadata,
                                                       const engine::VoiceProfile& profile) {
  auto* reservation = dynamic_cast<Reservation*>(&held);
  if (reservation == nullptr || reservation->store() != this ||
      reservation->key() != VoiceNameKey(model, name)) {
    return core::Internal("voice store: reservation does not match the voice");
  }
  metadata.id = reservation->id();
  metadata.model = std::string(model);
  metadata.name = std::string(name);
  metadata.created_at = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  const std::string encoded = EncodeVoiceFile(metadata, profile);
  StoredVoice voice{std::move(metadata), encoded.size()};
  auto stored = OnRequestConnection("register", [&](PgConnection& c) {
    return Insert(c, voice, encoded, hold_next_commit_.exchange(false));
  });
  if (!stored.ok()) return stored.status();
  RecordLocalChange(stored->metadata.id, *stored);  // at once here; elsewhere on the notification
  return stored;
}

absl::Status PostgresVoiceStore::Import(const StoredVoice& voice, std::string_view encoded) {
  auto stored = OnRequestConnection(
      "register", [&](PgConnection& c) { return Insert(c, voice, encoded, false); });
  if (!stored.ok()) return stored.status();
  RecordLocalChange(stored->metadata.id, *stored);
  return absl::OkStatus();
}

absl::StatusOr<engine::VoiceProfile> PostgresVoiceStore::LoadProfile(std::string_view id) const {
  auto not_found = [id] {
    return core::NotFound("no cloned voice " + core::Quoted(id), "voice", "voice_not_found");
  };
  if (!Get(id)) return not_found();
  auto encoded =
      OnRequestConnection("load_profile", [&](PgConnection& c) -> absl::StatusOr<std::string> {
        auto rows = c.Exec("SELECT profile FROM voxserve_voices WHERE id = $1", {{id}},
                           /*binary_result=*/true);
        if (!rows.ok()) return rows.status();
        if (PQntuples(rows->get()) == 0) return not_found();
        return PgText(rows->get(), 0, 0);
      });
  if (!encoded.ok()) return encoded.status();
  auto decoded = DecodeVoiceFile(*encoded);
  if (!decoded.ok()) {
    return core::Internal("voice " + std::string(id) + ": " +
                          std::string(decoded.status().message()));
  }
  return std::move(decoded->profile);
}

absl::Status PostgresVoiceStore::Delete(std::string_view id) {
  auto not_found = [id] {
    return core::NotFound("no cloned voice " + core::Quoted(id), "voice_id", "voice_not_found");
  };
  if (!IsVoiceId(id)) return not_found();
  // One statement, so one transaction: the row and its notification go together.
  {
    // Until it is recorded, a resync that no longer finds the voice must not take this
    // replica's own deletion for another's.
    std::lock_guard lock(mutex_);
    deleting_.insert(std::string(id));
  }
  auto deleted = OnRequestConnection("delete", [&](PgConnection& c) -> absl::StatusOr<bool> {
    auto rows = c.Exec(
        "WITH gone AS (DELETE FROM voxserve_voices WHERE id = $1 RETURNING id) "
        "SELECT pg_notify($2, 'del ' || id) FROM gone",
        {{id}, {kChannel}});
    if (!rows.ok()) return rows.status();
    return PQntuples(rows->get()) > 0;
  });
  bool was_known = false;
  if (deleted.ok()) was_known = RecordLocalChange(std::string(id), std::nullopt);
  {
    std::lock_guard lock(mutex_);
    deleting_.erase(deleting_.find(id));
  }
  if (!deleted.ok()) return deleted.status();
  if (!*deleted) {
    // Another replica deleted it first: its notification may have come while this one was
    // under way, when the resync left it to this call.
    if (was_known) ReportRemovedElsewhere({std::string(id)});
    return not_found();
  }
  return absl::OkStatus();
}

}  // namespace voxserve::store
