// The `postgres` backend of pronunciation dictionaries (store/dictionary_backend.h): one
// registry that every replica shares, in the database of the voices' registry (voices.postgres.*).
// A row per dictionary holds its whole record, every kept version included, in the encoding of
// store/dictionary_file.h, with a revision that grows on each change. Each replica holds every
// dictionary in memory, kept current by LISTEN/NOTIFY (a change on any replica reaches the others
// at once) and by a periodic full resync (voices.postgres.resync_ms) that re-reads only the rows
// whose revision moved.
//
// Writes are transactions on the request connection: Update and Patch read the row with
// SELECT ... FOR UPDATE, so two replicas changing one dictionary at once both land, one after the
// other; whatever grows the registry also takes an advisory lock and checks the count and byte
// bounds against the table, so they hold across replicas.
//
// Threads: PgListener's thread resyncs; Add, Update, Patch and Delete run on the caller's thread
// (PronunciationDictionaries' writer); reads answer from memory on any thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "store/dictionary_backend.h"
#include "store/dictionary_records.h"
#include "store/pg_listener.h"
#include "store/voice_store.h"

namespace voxserve::store {

// The schema versions this server knows (voxserve_dictionary_schema.version).
inline constexpr int kDictionarySchemaVersion = 1;

class PostgresDictionaryStore : public IndexedDictionaryBackend {
 public:
  // Connects with `connection`'s voices.postgres.* settings (DSN, timeouts, resync period).
  // Never fails for the database's sake: an unreachable database leaves the store empty and
  // Problem() set until the listener connects. Fails for a configuration without a DSN.
  static absl::StatusOr<std::unique_ptr<PostgresDictionaryStore>> Create(
      DictionaryStoreConfig config, const VoiceStoreConfig& connection);
  ~PostgresDictionaryStore() override;  // stops the listener

  absl::StatusOr<DictionaryInfo> Add(std::string_view name, std::string_view description,
                                     text::lexicon::Lexicon lexicon) override;
  absl::StatusOr<DictionaryInfo> Update(std::string_view id, const DictionaryEdit& edit) override;
  absl::StatusOr<DictionaryInfo> Patch(std::string_view id, std::optional<std::string> name,
                                       std::optional<bool> archived) override;
  absl::Status Delete(std::string_view id) override;

  std::string_view BackendName() const override { return "postgres"; }
  std::string Problem() const override;
  // Safe cross thread; when it returns, no call of the previous callback is under way.
  void SetOnChanged(std::function<void(const std::string& id)> changed) override;

 private:
  // One write's result: the dictionary as stored, or null when it was deleted.
  using Written = std::shared_ptr<const StoredDictionary>;
  explicit PostgresDictionaryStore(DictionaryStoreConfig config);
  absl::Status Resync(PgConnection& connection);
  void SetConnected(bool connected, const std::string& problem);
  // Runs `work` inside one transaction on the request connection; once it commits, puts its
  // result into the index (null: erases `id`). Unavailable "dictionary_store_unavailable"
  // while the database cannot be reached.
  absl::StatusOr<Written> Write(std::string_view id,
                                const std::function<absl::StatusOr<Written>(PgConnection&)>& work);
  // Stores `next` (replacing a row of `replaced_bytes`; none: a new row) within the bounds,
  // notifies the other replicas, and fills in its bytes and revision. Inside Write's transaction.
  absl::Status StoreRow(PgConnection& c, StoredDictionary& next,
                        std::optional<size_t> replaced_bytes) const;
  // The row of `id`, locked until the transaction ends. NotFound for none.
  absl::StatusOr<StoredDictionary> LockRow(PgConnection& c, std::string_view id) const;
  // Update's and Patch's transaction: `change` edits the locked row's record, which is stored
  // in its place and reported to on_changed_. NotFound for an unknown id.
  absl::StatusOr<DictionaryInfo> RewriteRow(
      std::string_view id, const std::function<absl::Status(DictionaryRecord&)>& change);
  void ReportChanged(const std::vector<std::string>& ids);

  mutable std::mutex mutex_;
  std::string problem_;  // guarded by mutex_
  std::atomic<bool> connected_{false};
  // Held by a resync from its read to its index update, and by a write from its COMMIT to its
  // index update: the index never goes back to a state older than what it showed.
  std::mutex sync_mutex_;
  std::mutex changed_mutex_;                               // held while on_changed_ runs
  std::function<void(const std::string& id)> on_changed_;  // guarded by changed_mutex_
  // Last: its hooks use everything above; the destructor stops it first.
  std::unique_ptr<PgListener> listener_;
};

}  // namespace voxserve::store
