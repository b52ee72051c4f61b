#pragma once
// The in-memory index both voice backends (store/voice_backend.h) answer List, Get and FindByName
// from, and hold registrations against: the voices by id, their name keys (VoiceNameKey), the
// names and ids being registered, and the bytes stored. Not locked itself: each backend guards
// it with the mutex that also guards what it keeps beside it.

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "store/voice_backend.h"

namespace voxserve::store {

class VoiceIndex {
 public:
  // A registration's hold on a name key and an id, until Release or Add.
  struct Hold {
    std::string id;
    std::string key;  // VoiceNameKey
  };

  VoiceIndex();  // seeds the new ids from std::random_device

  // Holds `name` within `model` and an id: `id` when given (an import keeps its voice's id),
  // else a new one. AlreadyExists "voice_name_taken" for a name (or id) stored or being
  // registered; ResourceExhausted "voice_limit_reached" (HTTP 507) when `max_count` voices are
  // stored or being registered.
  absl::StatusOr<Hold> Reserve(std::string_view model, std::string_view name, int max_count,
                               std::string id = {});
  // Lets the name and the id go (a registration ended; after Add only the id is still held).
  void Release(const Hold& hold);

  // Indexes `voice`, replacing what its id held. Of voices whose names read alike (from before
  // NFKC folding, or a copied file) the first indexed keeps the name and the others answer by
  // their id only: false for those.
  bool Add(StoredVoice voice);
  void Remove(std::string_view id);  // nothing for an unknown id
  void Clear();                      // the voices; holds stay

  // The voices of `model` (all for empty) in id order: a copy cheap enough to take under a lock.
  std::vector<StoredVoice> Select(std::string_view model) const;
  std::vector<StoredVoice> List(std::string_view model) const;  // Select, oldest first
  std::optional<StoredVoice> Get(std::string_view id) const;
  std::optional<StoredVoice> FindByName(std::string_view model, std::string_view name) const;
  bool Contains(std::string_view id) const { return voices_.contains(id); }
  size_t size() const { return voices_.size(); }
  size_t total_bytes() const { return total_bytes_; }
  const std::map<std::string, StoredVoice, std::less<>>& voices() const { return voices_; }

 private:
  std::map<std::string, StoredVoice, std::less<>> voices_;   // by id
  std::map<std::string, std::string, std::less<>> by_name_;  // name key → id
  std::set<std::string, std::less<>> held_names_;
  std::set<std::string, std::less<>> held_ids_;
  size_t total_bytes_ = 0;
  uint64_t id_state_ = 0;
};

// The read side both voice backends share: List, Get, FindByName and TotalBytes answer from
// `index_` under `mutex_`, which also guards what each backend keeps beside it.
class IndexedVoiceBackend : public VoiceBackend {
 public:
  std::vector<StoredVoice> List(std::string_view model = {}) const override;  // oldest first
  std::optional<StoredVoice> Get(std::string_view id) const override;
  std::optional<StoredVoice> FindByName(std::string_view model,
                                        std::string_view name) const override;
  size_t TotalBytes() const override;

 protected:
  mutable std::mutex mutex_;
  VoiceIndex index_;  // guarded by mutex_
};

}  // namespace voxserve::store
