// Where cloned voices live, behind one interface: the voices directory (VoiceStore, one machine)
// or PostgreSQL (PostgresVoiceStore, every replica sharing one registry). VoiceRegistry uses
// only this; the backends keep the voices' metadata in memory, so List, Get and FindByName never
// wait for a disk or a database.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/voice_cloning.h"
#include "store/voice_file.h"

namespace voxserve::store {

// YAML voices.* (server_config.cc). Defaults: a CosyVoice 2 profile of a 30 s prompt is about
// 0.5 MB (prompt_mel [1500, 80] f32 dominates), so 1000 voices fit in 512 MiB.
struct VoiceStoreConfig {
  std::string backend = "dir";  // "dir" or "postgres"
  std::string dir;              // dir backend; empty: voice cloning is off
  // postgres backend (store/postgres_voice_store.h): a libpq connection string or URI, given
  // directly or read from an environment variable or a file (a Kubernetes Secret) at startup.
  std::string postgres_dsn;
  std::string postgres_dsn_env;
  std::string postgres_dsn_file;
  int postgres_resync_ms = 30'000;  // full re-read of the registry, besides LISTEN/NOTIFY
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

struct StoredVoice {
  VoiceMetadata metadata;
  size_t file_bytes = 0;  // the encoded voice (store/voice_file.h), on disk or in the database
};

// Holds a name and a count slot until the backend's Commit or destruction. Owned by the caller;
// must not outlive its backend.
class VoiceReservation {
 public:
  virtual ~VoiceReservation() = default;
  const std::string& id() const { return id_; }

 protected:
  explicit VoiceReservation(std::string id) : id_(std::move(id)) {}

 private:
  std::string id_;
};

// Safe cross thread. Reserve, List, Get, FindByName, TotalBytes and Problem answer from memory
// (any thread, I/O threads included); Commit, Delete and LoadProfile may wait for the disk or the
// database and run on the registry's workers (LoadProfile: on a cache miss, see VoiceRegistry).
class VoiceBackend {
 public:
  virtual ~VoiceBackend() = default;

  // AlreadyExists (409) for a name the model already has or is registering; ResourceExhausted
  // with code "voice_limit_reached" (HTTP 507) when max_count voices exist or are pending;
  // Unavailable "voice_store_unavailable" (503) while the store cannot be reached.
  virtual absl::StatusOr<std::unique_ptr<VoiceReservation>> Reserve(std::string_view model,
                                                                    std::string_view name) = 0;
  // Stores the voice all or nothing. `metadata.id`, `name` and `model` are taken from the
  // reservation; created_at is set here. ResourceExhausted "voice_storage_full" (507) past
  // max_bytes, AlreadyExists when another replica took the name first, Unavailable when the
  // store went away, Internal for anything else.
  virtual absl::StatusOr<StoredVoice> Commit(VoiceReservation& reservation, std::string_view model,
                                             std::string_view name, VoiceMetadata metadata,
                                             const engine::VoiceProfile& profile) = 0;

  virtual std::vector<StoredVoice> List(std::string_view model = {}) const = 0;  // oldest first
  virtual std::optional<StoredVoice> Get(std::string_view id) const = 0;
  // By name within a model (names compared by VoiceNameKey).
  virtual std::optional<StoredVoice> FindByName(std::string_view model,
                                                std::string_view name) const = 0;
  // NotFound, Unavailable (the store is unreachable), or Internal when it no longer decodes.
  virtual absl::StatusOr<engine::VoiceProfile> LoadProfile(std::string_view id) const = 0;
  // NotFound for unknown ids, Unavailable while the store cannot be reached.
  virtual absl::Status Delete(std::string_view id) = 0;

  virtual size_t TotalBytes() const = 0;
  virtual std::string_view BackendName() const = 0;  // "dir" or "postgres": metrics, /health
  // Why the store cannot serve right now (the database is down, its schema is too new); empty
  // when it can. /health reports it (status degraded).
  virtual std::string Problem() const { return {}; }
  // `removed` is called with the id of each voice that vanished without this object's Delete
  // (another replica deleted it: the postgres backend), on the backend's own thread. Safe cross
  // thread; when it returns, no call of the previous callback is under way (null: none).
  virtual void SetOnRemovedElsewhere(std::function<void(const std::string& id)> removed) {
    (void)removed;
  }

  // Reserve + Commit, for callers that have the profile already.
  absl::StatusOr<StoredVoice> Add(std::string_view model, std::string_view name,
                                  VoiceMetadata metadata, const engine::VoiceProfile& profile) {
    auto reservation = Reserve(model, name);
    if (!reservation.ok()) return reservation.status();
    return Commit(**reservation, model, name, std::move(metadata), profile);
  }
};

// Checks a client's voice name: 1..64 characters of valid UTF-8, no control characters, no
// invisible or format characters (text::FirstInvisibleCharacter: names that look alike must be
// the same name), no '/', '\\' or "..", no leading or trailing space, not starting with
// "voice_" (ids do). InvalidArgument with param "name".
absl::Status ValidateVoiceName(std::string_view name);

// The key two names of one model collide on: model + '\n' + the name's NFKC_Casefold
// (text::LookAlikeKey), so names that read the same are one name.
std::string VoiceNameKey(std::string_view model, std::string_view name);
// "voice_" + 24 lower-case hex digits.
bool IsVoiceId(std::string_view id);
// A fresh voice id from `state` (advanced).
std::string NewVoiceId(uint64_t& state);

}  // namespace voxserve::store
