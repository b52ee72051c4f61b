#include "store/postgres_dictionary_store.h"

#include <cstdlib>
#include <map>
#include <utility>

#include "core/error.h"
#include "spdlog/spdlog.h"
#include "store/dictionary_file.h"

namespace voxserve::store {
namespace {

constexpr const char* kChannel = "voxserve_dictionaries";
// pg_advisory_xact_lock key that serializes what grows the registry (an Add, an Update or Patch
// that makes a row larger) across replicas, so the count and byte bounds hold. Changes are
// milliseconds and rare. The voices use ...1001 (migrations) and ...1002.
constexpr const char* kBoundsLock = "7305041003";
constexpr int kRetryAfterSeconds = 2;

// Migration N (1-based) takes the schema from version N-1 to N. Append only.
constexpr const char* kMigrations[] = {
    // 1: the registry. body is the dictionary file's JSON (store/dictionary_file.h): metadata
    // and every kept version; bytes is its octet_length; revision grows by one on each change.
    "CREATE TABLE voxserve_dictionaries ("
    " id text PRIMARY KEY,"
    " body text NOT NULL,"
    " bytes bigint NOT NULL,"
    " revision bigint NOT NULL,"
    " updated_at timestamptz NOT NULL DEFAULT now())",
};
static_assert(std::size(kMigrations) == kDictionarySchemaVersion);
constexpr PgSchema kSchema = {"dictionary", "voxserve_dictionary_schema", kMigrations};

absl::Status Unreachable(std::string_view problem) {
  return core::StoreUnavailable("the shared dictionary registry (PostgreSQL) is unreachable (" +
                                    std::string(problem) +
                                    "); the server reconnects on its own, retry shortly",
                                kRetryAfterSeconds, "dictionary_store_unavailable");
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresDictionaryStore>> PostgresDictionaryStore::Create(
    DictionaryStoreConfig config, const VoiceStoreConfig& connection) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  if (absl::Status status = connection.Validate(); !status.ok()) return status;
  auto dsn = connection.PostgresDsn();
  if (!dsn.ok()) {
    return core::InvalidArgument("dictionaries.backend is postgres: " +
                                 std::string(dsn.status().message()));
  }
  std::unique_ptr<PostgresDictionaryStore> store(new PostgresDictionaryStore(std::move(config)));
  PostgresDictionaryStore* raw = store.get();
  auto listener = PgListener::Start(
      *std::move(dsn),
      {.statement_timeout_ms = connection.postgres_statement_timeout_ms,
       .idle_in_transaction_timeout_ms = connection.postgres_idle_in_transaction_timeout_ms},
      kChannel, std::chrono::milliseconds(connection.postgres_resync_ms), "dictionaries",
      {.prepare = [](PgConnection& c) { return PgMigrate(c, kSchema); },
       .resync = [raw](PgConnection& c) { return raw->Resync(c); },
       .state = [raw](bool connected,
                      const std::string& problem) { raw->SetConnected(connected, problem); }});
  if (!listener.ok()) return listener.status();
  store->listener_ = *std::move(listener);
  return store;
}

PostgresDictionaryStore::PostgresDictionaryStore(DictionaryStoreConfig config)
    : IndexedDictionaryBackend(std::move(config)), problem_("not connected yet") {}

PostgresDictionaryStore::~PostgresDictionaryStore() { listener_.reset(); }

void PostgresDictionaryStore::SetConnected(bool connected, const std::string& problem) {
  const bool was = connected_.exchange(connected);
  {
    std::lock_guard lock(mutex_);
    problem_ = problem;
  }
  if (connected && !was) {
    spdlog::info("dictionaries: connected to PostgreSQL ({} dictionaries)", index_.size());
  }
  if (!connected && was) spdlog::warn("dictionaries: PostgreSQL unreachable: {}", problem);
}

std::string PostgresDictionaryStore::Problem() const {
  std::lock_guard lock(mutex_);
  return problem_.empty() ? std::string() : "dictionaries.backend postgres: " + problem_;
}

void PostgresDictionaryStore::SetOnChanged(std::function<void(const std::string& id)> changed) {
  std::lock_guard lock(changed_mutex_);
  on_changed_ = std::move(changed);
}

void PostgresDictionaryStore::ReportChanged(const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  std::lock_guard lock(changed_mutex_);
  if (!on_changed_) return;
  for (const std::string& id : ids) on_changed_(id);
}

absl::Status PostgresDictionaryStore::Resync(PgConnection& c) {
  std::vector<std::string> changed;  // known before and changed or deleted since
  {
    std::lock_guard sync(sync_mutex_);
    auto rows = c.Exec("SELECT id, revision FROM voxserve_dictionaries");
    if (!rows.ok()) return rows.status();
    const std::map<std::string, int64_t> known = index_.Revisions();
    std::map<std::string, int64_t> present;
    std::string wanted;  // a text[] literal of the ids to read; ids are [a-z0-9_] only
    for (int row = 0; row < PQntuples(rows->get()); ++row) {
      std::string id = PgText(rows->get(), row, 0);
      if (!IsDictionaryId(id)) {
        spdlog::warn("dictionaries: skipping row {}: not a dictionary id", core::Quoted(id));
        continue;
      }
      const int64_t revision = std::strtoll(PQgetvalue(rows->get(), row, 1), nullptr, 10);
      auto it = known.find(id);
      if (it == known.end() || it->second != revision) wanted += (wanted.empty() ? "" : ",") + id;
      present.emplace(std::move(id), revision);
    }
    std::vector<std::shared_ptr<const StoredDictionary>> loaded;
    if (!wanted.empty()) {
      auto bodies =
          c.Exec("SELECT id, revision, body FROM voxserve_dictionaries WHERE id = ANY($1::text[])",
                 {{"{" + wanted + "}"}});
      if (!bodies.ok()) return bodies.status();
      const PGresult* r = bodies->get();
      for (int row = 0; row < PQntuples(r); ++row) {
        const std::string id = PgText(r, row, 0);
        const std::string body = PgText(r, row, 2);
        auto record = DecodeDictionaryFile(body, config_.limits);
        absl::Status valid = record.status();
        if (valid.ok() && record->id != id)
          valid = core::InvalidArgument("its id is " + record->id);
        if (!valid.ok()) {
          // Kept as it was (if this replica had it): the next change of the row is read again.
          spdlog::warn("dictionaries: skipping row {}: {}", id, std::string(valid.message()));
          continue;
        }
        loaded.push_back(std::make_shared<const StoredDictionary>(StoredDictionary{
            *std::move(record), body.size(), std::strtoll(PQgetvalue(r, row, 1), nullptr, 10)}));
      }
    }
    for (const auto& [id, revision] : known) {
      if (!present.contains(id)) {
        index_.Erase(id);
        changed.push_back(id);
      }
    }
    for (auto& dictionary : loaded) {
      if (known.contains(dictionary->record.id)) changed.push_back(dictionary->record.id);
      index_.Put(std::move(dictionary));
    }
  }
  ReportChanged(changed);
  return absl::OkStatus();
}

absl::StatusOr<PostgresDictionaryStore::Written> PostgresDictionaryStore::Write(
    std::string_view id, const std::function<absl::StatusOr<Written>(PgConnection&)>& work) {
  if (!connected_.load()) {
    std::lock_guard lock(mutex_);
    return Unreachable(problem_);
  }
  auto written = listener_->Request([&](PgConnection& c) -> absl::StatusOr<Written> {
    if (absl::Status s = c.Run("BEGIN"); !s.ok()) return s;
    absl::StatusOr<Written> done = work(c);
    if (!done.ok()) {
      if (!c.broken()) (void)c.Run("ROLLBACK");
      return done.status();
    }
    std::lock_guard sync(sync_mutex_);
    // A COMMIT that fails leaves the outcome unknown here: the listener, woken when the
    // connection broke, reads what the database kept.
    if (absl::Status s = c.Run("COMMIT"); !s.ok()) return s;
    if (*done) {
      index_.Put(*done);
    } else {
      index_.Erase(id);
    }
    return done;
  });
  if (!written.ok() && written.status().code() == absl::StatusCode::kUnavailable) {
    return Unreachable(std::string(written.status().message()));
  }
  return written;
}

absl::StatusOr<StoredDictionary> PostgresDictionaryStore::LockRow(PgConnection& c,
                                                                  std::string_view id) const {
  auto rows =
      c.Exec("SELECT body, revision FROM voxserve_dictionaries WHERE id = $1 FOR UPDATE", {{id}});
  if (!rows.ok()) return rows.status();
  if (PQntuples(rows->get()) == 0) return DictionaryNotFound(id);
  const std::string body = PgText(rows->get(), 0, 0);
  auto record = DecodeDictionaryFile(body, config_.limits);
  if (!record.ok()) {
    return core::Internal("dictionary " + std::string(id) + " in PostgreSQL does not decode: " +
                          std::string(record.status().message()));
  }
  return StoredDictionary{*std::move(record), body.size(),
                          std::strtoll(PQgetvalue(rows->get(), 0, 1), nullptr, 10)};
}

absl::Status PostgresDictionaryStore::StoreRow(PgConnection& c, StoredDictionary& next,
                                               std::optional<size_t> replaced_bytes) const {
  const std::string body = EncodeDictionaryFile(next.record);
  const std::string& id = next.record.id;
  if (!replaced_bytes || body.size() > *replaced_bytes) {
    if (absl::Status s = c.Run("SELECT pg_advisory_xact_lock($1)", {{kBoundsLock}}); !s.ok()) {
      return s;
    }
    auto totals = c.Exec("SELECT count(*), coalesce(sum(bytes), 0) FROM voxserve_dictionaries");
    if (!totals.ok()) return totals.status();
    const long long count = std::strtoll(PQgetvalue(totals->get(), 0, 0), nullptr, 10);
    const unsigned long long bytes = std::strtoull(PQgetvalue(totals->get(), 0, 1), nullptr, 10);
    if (!replaced_bytes && count >= config_.max_count) {
      return DictionaryLimitReached(config_.max_count);
    }
    if (bytes - replaced_bytes.value_or(0) + body.size() > config_.max_bytes) {
      return DictionaryStorageFull(config_.max_bytes);
    }
  }
  const std::string size = std::to_string(body.size());
  auto stored =
      replaced_bytes
          ? c.Exec(
                "UPDATE voxserve_dictionaries SET body = $2, bytes = $3, "
                "revision = revision + 1, updated_at = now() WHERE id = $1 RETURNING revision",
                {{id}, {body}, {size}})
          : c.Exec(
                "INSERT INTO voxserve_dictionaries (id, body, bytes, revision) "
                "VALUES ($1, $2, $3, 1) RETURNING revision",
                {{id}, {body}, {size}});
  if (!stored.ok()) return stored.status();
  if (PQntuples(stored->get()) != 1) return DictionaryNotFound(id);
  if (absl::Status s = c.Run("SELECT pg_notify($1, $2)", {{kChannel}, {id}}); !s.ok()) return s;
  next.bytes = body.size();
  next.revision = std::strtoll(PQgetvalue(stored->get(), 0, 0), nullptr, 10);
  return absl::OkStatus();
}

absl::StatusOr<DictionaryInfo> PostgresDictionaryStore::Add(std::string_view name,
                                                            std::string_view description,
                                                            text::lexicon::Lexicon lexicon) {
  uint64_t id_state = RandomDictionaryIdState();
  auto record = NewDictionaryRecord(name, description, std::move(lexicon), config_, id_state);
  if (!record.ok()) return record.status();
  const std::string id = record->id;  // 80 random bits: a clash is an Internal error
  auto written = Write(id, [&](PgConnection& c) -> absl::StatusOr<Written> {
    StoredDictionary next{*record};
    if (absl::Status s = StoreRow(c, next, std::nullopt); !s.ok()) return s;
    return std::make_shared<const StoredDictionary>(std::move(next));
  });
  if (!written.ok()) return written.status();
  return DictionaryInfoOf(**written);
}

absl::StatusOr<DictionaryInfo> PostgresDictionaryStore::RewriteRow(
    std::string_view id, const std::function<absl::Status(DictionaryRecord&)>& change) {
  if (!IsDictionaryId(id)) return DictionaryNotFound(id);
  auto written = Write(id, [&](PgConnection& c) -> absl::StatusOr<Written> {
    // The row as the database has it, locked: a change on another replica waits here for this
    // one to commit and then edits its result, so none is lost.
    auto current = LockRow(c, id);
    if (!current.ok()) return current.status();
    StoredDictionary next = *current;
    if (absl::Status s = change(next.record); !s.ok()) return s;
    if (absl::Status s = StoreRow(c, next, current->bytes); !s.ok()) return s;
    return std::make_shared<const StoredDictionary>(std::move(next));
  });
  if (!written.ok()) return written.status();
  ReportChanged({std::string(id)});
  return DictionaryInfoOf(**written);
}

absl::StatusOr<DictionaryInfo> PostgresDictionaryStore::Update(std::string_view id,
                                                               const DictionaryEdit& edit) {
  return RewriteRow(id, [&](DictionaryRecord& record) {
    uint64_t id_state = RandomDictionaryIdState();
    return AddDictionaryVersion(record, edit, config_, id_state);
  });
}

absl::StatusOr<DictionaryInfo> PostgresDictionaryStore::Patch(std::string_view id,
                                                              std::optional<std::string> name,
                                                              std::optional<bool> archived) {
  if (name) {
    if (absl::Status status = ValidateDictionaryName(*name); !status.ok()) return status;
  }
  return RewriteRow(
      id, [&](DictionaryRecord& record) { return PatchDictionaryRecord(record, name, archived); });
}

absl::Status PostgresDictionaryStore::Delete(std::string_view id) {
  if (!IsDictionaryId(id)) return DictionaryNotFound(id);
  auto written = Write(id, [&](PgConnection& c) -> absl::StatusOr<Written> {
    auto rows = c.Exec(
        "WITH gone AS (DELETE FROM voxserve_dictionaries WHERE id = $1 RETURNING id) "
        "SELECT pg_notify($2, id) FROM gone",
        {{id}, {kChannel}});
    if (!rows.ok()) return rows.status();
    if (PQntuples(rows->get()) == 0) return DictionaryNotFound(id);
    return Written();
  });
  if (!written.ok()) return written.status();
  ReportChanged({std::string(id)});
  return absl::OkStatus();
}

}  // namespace voxserve::store
