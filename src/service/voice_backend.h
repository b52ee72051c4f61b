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
#include "service/voice_file.h"

namespace voxserve::service {

struct StoredVoice {
  VoiceMetadata metadata;
  size_t file_bytes = 0;  // the encoded voice (service/voice_file.h), on disk or in the database
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

}  // namespace voxserve::service
