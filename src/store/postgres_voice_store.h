// The `postgres` backend of cloned voices (store/voice_backend.h): one registry that every
// replica shares. A row per voice holds its metadata and its encoded profile (bytea, the voice
// file layout of store/voice_file.h, checksum included). Each replica keeps the metadata of
// every voice in memory, kept current by LISTEN/NOTIFY (a registration or deletion on any replica
// reaches the others at once) and by a periodic full resync as the fallback.
//
// Threads: a listener thread owns one connection (schema migration, LISTEN, resync, reconnect
// with backoff); Commit, Delete and LoadProfile use a second connection, one at a time, on the
// caller's thread (the registry's workers). Nothing here runs a query on the calling thread of
// Reserve, List, Get or FindByName.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/pg_connection.h"
#include "store/pg_listener.h"
#include "store/voice_backend.h"
#include "store/voice_index.h"
#include "store/voice_store.h"
#include "store/voice_store_metrics.h"

namespace voxserve::store {

// The schema versions this server knows (voxserve_schema.version); a newer database is refused.
inline constexpr int kVoiceSchemaVersion = 2;

class PostgresVoiceStore : public IndexedVoiceBackend {
 public:
  // Never fails for the database's sake: an unreachable database leaves the store empty and
  // Problem() set until the listener connects. Fails for a config without a DSN. `metrics` may
  // be null; else it must outlive the store.
  static absl::StatusOr<std::unique_ptr<PostgresVoiceStore>> Create(VoiceStoreConfig config,
                                                                    VoiceStoreMetrics* metrics);
  ~PostgresVoiceStore() override;  // stops the listener

  absl::StatusOr<std::unique_ptr<VoiceReservation>> Reserve(std::string_view model,
                                                            std::string_view name) override;
  absl::StatusOr<StoredVoice> Commit(VoiceReservation& reservation, std::string_view model,
                                     std::string_view name, VoiceMetadata metadata,
                                     const engine::VoiceProfile& profile) override;
  absl::StatusOr<engine::VoiceProfile> LoadProfile(std::string_view id) const override;
  absl::Status Delete(std::string_view id) override;
  std::string_view BackendName() const override { return "postgres"; }
  std::string Problem() const override;
  void SetOnRemovedElsewhere(std::function<void(const std::string& id)> removed) override;

  // Stores an already encoded voice as it is (id and created_at kept): `voxserve voices import`.
  // AlreadyExists when its id or name is taken.
  absl::Status Import(const StoredVoice& voice, std::string_view encoded);
  // Waits until the listener has connected and loaded the registry once, or `timeout` passes
  // (the command line's import and export). False on timeout.
  bool WaitUntilConnected(std::chrono::milliseconds timeout) const;

 private:
  class Reservation;
  PostgresVoiceStore(VoiceStoreConfig config, std::string dsn, VoiceStoreMetrics* metrics);
  absl::Status Resync(PgConnection& connection);
  void SetConnected(bool connected, const std::string& problem);
  PgSessionLimits SessionLimits() const;
  // Runs `work` on the listener's request connection, timing it as `operation`. Unavailable at
  // once while the listener is disconnected.
  template <typename Work>
  auto OnRequestConnection(const char* operation, Work&& work) const
      -> decltype(work(std::declval<PgConnection&>()));
  absl::StatusOr<StoredVoice> Insert(PgConnection& connection, const StoredVoice& voice,
                                     std::string_view encoded, bool hold_before_commit) const;
  // This replica's own commit (a voice) or deletion (none), applied to the index at once.
  // Whether the index held `id` before.
  bool RecordLocalChange(const std::string& id, std::optional<StoredVoice> voice);
  // Tells removed_elsewhere_ of each id (not under mutex_).
  void ReportRemovedElsewhere(const std::vector<std::string>& ids);

  const VoiceStoreConfig config_;
  const std::string dsn_;
  VoiceStoreMetrics* metrics_;  // may be null
  // TEST ONLY (VOXSERVE_TEST_PG_HOLD_COMMIT with voices.test_cloner): the first registration
  // waits before its COMMIT until its connection breaks, so a test can kill the database there
  // or stall the server there; later ones run as usual.
  std::atomic<bool> hold_next_commit_;

  mutable std::condition_variable connected_changed_;  // with mutex_
  // index_ is what this replica knows; the database has the last word in Commit (another
  // replica may have taken a name or the last slot since the last notification).
  std::multiset<std::string, std::less<>> deleting_;  // this replica's, under way; mutex_
  std::string problem_;                               // guarded by mutex_
  // A resync reads a snapshot: this replica's changes that commit while it runs may be missing
  // from it, so they are replayed on top (the others' come with their own notification).
  struct LocalChange {
    uint64_t sequence;
    std::string id;
    std::optional<StoredVoice> voice;  // none: deleted
  };
  uint64_t change_sequence_ = 0;     // guarded by mutex_
  std::vector<LocalChange> recent_;  // since the last resync's snapshot; guarded by mutex_
  bool loaded_once_ = false;         // guarded by mutex_
  std::atomic<bool> connected_{false};

  // Held while removed_elsewhere_ runs, so that replacing it waits for a call under way.
  std::mutex removed_mutex_;
  std::function<void(const std::string&)> removed_elsewhere_;  // guarded by removed_mutex_

  // Last: its hooks use everything above; the destructor stops it first.
  std::unique_ptr<PgListener> listener_;
};

}  // namespace voxserve::store
