// What both dictionary backends (store/dictionary_backend.h) do alike: the checks of a name and
// a description, a new dictionary, a new version from an edit, a patch, and the in-memory index
// that Get, List and Version answer from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "store/dictionary_backend.h"
#include "store/dictionary_file.h"

namespace voxserve::store {

// One dictionary as a backend holds it.
struct StoredDictionary {
  DictionaryRecord record;
  size_t bytes = 0;      // EncodeDictionaryFile(record).size()
  int64_t revision = 0;  // postgres: the row's revision, one more on every change; dir: 0
};

absl::Status ValidateDictionaryName(std::string_view name);
absl::Status ValidateDictionaryDescription(std::string_view description);
absl::Status DictionaryNotFound(std::string_view id);
// ResourceExhausted (507) "dictionary_limit_reached" / "dictionary_storage_full".
absl::Status DictionaryLimitReached(int max_count);
absl::Status DictionaryStorageFull(size_t max_bytes);
int64_t DictionaryNowSeconds();

// Random bits to start NewDictionaryId's state from.
uint64_t RandomDictionaryIdState();
// `prefix` + kDictionaryIdHexDigits lower-case hex digits from `state` (advanced).
std::string NewDictionaryId(std::string_view prefix, uint64_t& state);

// A new dictionary (its id from `id_state`) whose first version is `lexicon`, after checking
// the name, the description and the lexicon (errors as DictionaryBackend::Add).
absl::StatusOr<DictionaryRecord> NewDictionaryRecord(std::string_view name,
                                                     std::string_view description,
                                                     text::lexicon::Lexicon lexicon,
                                                     const DictionaryStoreConfig& config,
                                                     uint64_t& id_state);
// Appends the version `edit` makes of the latest one and drops the oldest beyond
// config.max_versions. `edit`'s error as is; "invalid_dictionary" outside config.limits.
absl::Status AddDictionaryVersion(DictionaryRecord& record, const DictionaryEdit& edit,
                                  const DictionaryStoreConfig& config, uint64_t& id_state);
// ElevenLabs' PATCH applied to `record` (DictionaryBackend::Patch).
absl::Status PatchDictionaryRecord(DictionaryRecord& record, std::optional<std::string> name,
                                   std::optional<bool> archived);

DictionaryInfo DictionaryInfoOf(const StoredDictionary& dictionary);

// Every dictionary of a backend, by id. Safe cross thread: entries are immutable and shared, so
// a reader keeps what it got while a writer replaces it (copy on write).
class DictionaryIndex {
 public:
  std::shared_ptr<const StoredDictionary> Find(std::string_view id) const;
  std::optional<DictionaryInfo> Get(std::string_view id) const;
  std::vector<DictionaryInfo> List(bool include_archived) const;  // newest first
  // Errors as DictionaryBackend::Version.
  absl::StatusOr<DictionaryVersion> Version(std::string_view id, std::string_view version_id,
                                            int max_versions) const;
  size_t TotalBytes() const;
  size_t size() const;
  std::map<std::string, int64_t> Revisions() const;  // id → revision

  void Put(std::shared_ptr<const StoredDictionary> dictionary);  // in place of its id's
  bool Erase(std::string_view id);                               // whether it was there

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const StoredDictionary>, std::less<>> entries_;  // mutex_
  size_t total_bytes_ = 0;                                                               // mutex_
};

// The read side both backends share: Get, List, Version and TotalBytes answer from `index_`,
// which the backend keeps current.
class IndexedDictionaryBackend : public DictionaryBackend {
 public:
  std::optional<DictionaryInfo> Get(std::string_view id) const override { return index_.Get(id); }
  std::vector<DictionaryInfo> List(bool include_archived) const override {
    return index_.List(include_archived);
  }
  absl::StatusOr<DictionaryVersion> Version(std::string_view id,
                                            std::string_view version_id) const override {
    return index_.Version(id, version_id, config_.max_versions);
  }
  size_t TotalBytes() const override { return index_.TotalBytes(); }
  const DictionaryStoreConfig& config() const override { return config_; }

 protected:
  explicit IndexedDictionaryBackend(DictionaryStoreConfig config) : config_(std::move(config)) {}

  const DictionaryStoreConfig config_;
  DictionaryIndex index_;
};

}  // namespace voxserve::store
