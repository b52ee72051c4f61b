// The `dir` backend of cloned voices (store/voice_backend.h): one file per voice in the
// configured voices directory (layout: store/voice_file.h), written atomically, loaded again at
// startup, bounded in count and bytes. Only metadata stays in memory; a profile's tensors are
// read from its file on use. One machine only: another process's writes are not seen.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/voice_cloning.h"
#include "store/voice_backend.h"
#include "store/voice_file.h"
#include "store/voice_index.h"

namespace voxserve::store {

// Safe cross thread: one mutex guards the index; file writes happen outside it, under a
// reservation that already holds the name and a count slot, so concurrent registrations of one
// name get one success and one AlreadyExists, and the bounds are never overshot.
class VoiceStore : public IndexedVoiceBackend {
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
    Reservation(VoiceStore* store, VoiceIndex::Hold hold);
    VoiceStore* store_;
    VoiceIndex::Hold hold_;
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

  // Reads the voice's file again: NotFound, or Internal when it no longer decodes.
  absl::StatusOr<engine::VoiceProfile> LoadProfile(std::string_view id) const override;
  // Removes the file (unlink, fsync the directory) and the entry. NotFound for unknown ids.
  absl::Status Delete(std::string_view id) override;

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
  absl::StatusOr<StoredVoice> Store(Reservation& reservation, std::string_view model,
                                    std::string_view name, VoiceMetadata metadata,
                                    const engine::VoiceProfile& profile, bool keep_created_at);
  std::string PathFor(std::string_view id) const;

  const VoiceStoreConfig config_;
  bool fail_before_rename_ = false;  // guarded by mutex_
};

}  // namespace voxserve::store
