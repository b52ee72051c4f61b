// The `dir` backend of cloned voices (service/voice_backend.h): one file per voice in the
// configured voices directory (layout: service/voice_file.h), written atomically, loaded again at
// startup, bounded in count and bytes. Only metadata stays in memory; a profile's tensors are
// read from its file on use. One machine only: another process's writes are not seen.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/voice_cloning.h"
#include "service/voice_backend.h"
#include "service/voice_file.h"

namespace voxserve::service {

// YAML voices.* (server_config.cc). Defaults: a CosyVoice 2 profile of a 30 s prompt is about
// 0.5 MB (prompt_mel [1500, 80] f32 dominates), so 1000 voices fit in 512 MiB.
struct VoiceStoreConfig {
  std::string backend = "dir";            // "dir" or "postgres"
  std::string dir;                        // dir backend; empty: voice cloning is off
  // postgres backend (service/postgres_voice_store.h): a libpq connection string or URI, given
  // directly or read from an environment variable or a file (a Kubernetes Secret) at startup.
  std::string postgres_dsn;
  std::string postgres_dsn_env;
  std::string postgres_dsn_file;
  int postgres_resync_ms = 30'000;         // full re-read of the registry, besides LISTEN/NOTIFY
  int postgres_statement_timeout_ms = 10'000;
  // A registration's transaction idle this long (its replica stalled or cut off mid-way) is
  // ended by PostgreSQL, which frees the registration lock the other replicas wait for. Below
  // statement_timeout so that their waiting registrations outlast it; a registration's own idle
  // gaps are microseconds.
  int postgres_idle_in_transaction_timeout_ms = 5'000;
  int max_count = 1000;                   // stored voices, all models together
  size_t max_bytes = 512ull << 20;        // their files together
  size_t max_upload_bytes = 20ull << 20;  // one audio sample: 30 s of 48 kHz 32-bit stereo WAV
                                          // is 11.5 MB; OpenAI's own limit is not published
  int max_pending = 4;                    // registrations being cloned at once (429 beyond)
  // TEST ONLY: models whose engine clones no voices get TestVoiceCloner (a deterministic profile
  // from the decoded samples), so the API can be tested end to end without a cloning model.
  bool test_cloner = false;

  absl::Status Validate() const;
  bool enabled() const { return backend == "postgres" || !dir.empty(); }
  // The DSN from postgres_dsn, else the variable postgres_dsn_env names, else the file
  // postgres_dsn_file (trailing white space dropped). InvalidArgument naming the key when none.
  absl::StatusOr<std::string> PostgresDsn() const;
};

// Safe cross thread: one mutex guards the index; file writes happen outside it, under a
// reservation that already holds the name and a count slot, so concurrent registrations of one
// name get one success and one AlreadyExists, and the bounds are never overshot.
class VoiceStore : public VoiceBackend {
 public:
  // Creates `config.dir` if needed and loads every valid voice file in it. Leftover temporary
  // files (a write interrupted by a crash) are removed; corrupt or foreign files are skipped
  // with a warning. Fails only when the directory cannot be created or read.
  static absl::StatusOr<std::unique_ptr<VoiceStore>> Create(VoiceStoreConfig config);

  // Holds a name and a slot until Commit or destruction. Owned by the caller; must not outlive
  // the store.
  class Reservation : public VoiceReservation {
   public:
    ~Reservation() override;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;

   private:
    friend class VoiceStore;
    Reservation(VoiceStore* store, std::string id, std::string key);
    VoiceStore* store_;
    std::string key_;  // VoiceNameKey
    bool committed_ = false;
  };

  // AlreadyExists (409) for a name the model already has or is registering; ResourceExhausted
  // with code "voice_limit_reached" (HTTP 507) when max_count voices exist or are pending.
  absl::StatusOr<std::unique_ptr<VoiceReservation>> Reserve(std::string_view model,
                                                            std::string_view name) override;

  // Writes the voice (temp file in the directory, fsync, rename, fsync the directory) and adds
  // it to the index. `metadata.id`, `name` and `model` are taken from the reservation;
  // created_at is set here. ResourceExhausted "voice_storage_full" (507) when the file would
  // pass max_bytes; Internal when the write fails (nothing is left behind).
  absl::StatusOr<StoredVoice> Commit(VoiceReservation& reservation, std::string_view model,
                                     std::string_view name, VoiceMetadata metadata,
                                     const engine::VoiceProfile& profile) override;

  std::vector<StoredVoice> List(std::string_view model = {}) const override;  // oldest first
  std::optional<StoredVoice> Get(std::string_view id) const override;
  std::optional<StoredVoice> FindByName(std::string_view model,
                                        std::string_view name) const override;
  // Reads the voice's file again: NotFound, or Internal when it no longer decodes.
  absl::StatusOr<engine::VoiceProfile> LoadProfile(std::string_view id) const override;
  // Removes the file (unlink, fsync the directory) and the entry. NotFound for unknown ids.
  absl::Status Delete(std::string_view id) override;

  size_t TotalBytes() const override;
  std::string_view BackendName() const override { return "dir"; }

  // Stores a voice exported from another store as it was (id and created_at kept): `voxserve
  // voices export`. AlreadyExists when its id or its name is taken; Commit's other errors.
  absl::Status Import(const VoiceMetadata& metadata, const engine::VoiceProfile& profile);
  const VoiceStoreConfig& config() const { return config_; }

  // TEST ONLY: the next Commit writes and syncs its temporary file, then fails as if the process
  // died before the rename (the file stays behind, as after a crash).
  void FailNextCommitBeforeRenameForTesting() { fail_before_rename_ = true; }

 private:
  explicit VoiceStore(VoiceStoreConfig config);
  absl::Status LoadAll();
  void Release(const std::string& key);
  absl::StatusOr<StoredVoice> Store(Reservation& reservation, std::string_view model,
                                    std::string_view name, VoiceMetadata metadata,
                                    const engine::VoiceProfile& profile, bool keep_created_at);
  std::string PathFor(std::string_view id) const;

  const VoiceStoreConfig config_;
  mutable std::mutex mutex_;
  std::map<std::string, StoredVoice, std::less<>> voices_;   // by id; guarded by mutex_
  std::map<std::string, std::string, std::less<>> by_name_;  // key → id; guarded by mutex_
  std::set<std::string, std::less<>> pending_;               // reserved keys; guarded by mutex_
  std::set<std::string, std::less<>> pending_ids_;           // guarded by mutex_
  size_t total_bytes_ = 0;                                   // guarded by mutex_
  uint64_t id_state_ = 0;                                    // guarded by mutex_
  bool fail_before_rename_ = false;                          // guarded by mutex_
};

}  // namespace voxserve::service
