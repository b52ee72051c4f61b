// The `dir` backend of pronunciation dictionaries (store/dictionary_backend.h), one machine's
// store. Per dictionary, `<id>.json` holds its metadata and its versions' ids (format 2,
// store/dictionary_file.h), and `<id>.versions/<version_id>.json` each version's lexicon,
// written once: a change writes its new version and the small metadata file, and unlinks the
// versions it drops, so it costs what it changes, not every kept version again. Every write is
// durable (fsync; the metadata by temporary file and rename; fsync of the directories).
//
// Memory holds each dictionary's metadata and latest lexicon (what requests use), and the
// kCachedOlderVersions older lexicons last asked for; an older version is read from its file on
// first use. Format 1 files (every version inline, before issue 39) are converted at startup.
// One machine only: another process's writes are not seen.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "store/dictionary_backend.h"
#include "store/dictionary_records.h"

namespace voxserve::store {

// Safe cross thread: writes run one at a time under one mutex (they are small and rare); reads
// answer from the index and never wait for them.
class DictionaryStore : public IndexedDictionaryBackend {
 public:
  // Creates `config.dir` if needed and loads every dictionary in it. Leftover temporary files
  // and version files no metadata names (a write interrupted by a crash) are removed; corrupt or
  // foreign files are skipped with a warning. Fails only when the directory cannot be created or
  // read.
  static absl::StatusOr<std::unique_ptr<DictionaryStore>> Create(DictionaryStoreConfig config);

  // Each change writes what it changes (Delete: unlinks the metadata, then the versions);
  // Internal when that fails (nothing is left behind).
  absl::StatusOr<DictionaryInfo> Add(std::string_view name, std::string_view description,
                                     text::lexicon::Lexicon lexicon) override;
  absl::StatusOr<DictionaryInfo> Update(std::string_view id, const DictionaryEdit& edit) override;
  absl::StatusOr<DictionaryInfo> Patch(std::string_view id, std::optional<std::string> name,
                                       std::optional<bool> archived) override;
  absl::Status Delete(std::string_view id) override;

  // Older versions than the latest come from their file on first use (a small read), then
  // from the cache of kCachedOlderVersions.
  absl::StatusOr<DictionaryVersion> Version(std::string_view id,
                                            std::string_view version_id) const override;

  std::string_view BackendName() const override { return "dir"; }

  static constexpr size_t kCachedOlderVersions = 8;
  // Called on the writing thread, after the write mutex is released.
  void SetOnChanged(std::function<void(const std::string& id)> changed) override {
    on_changed_ = std::move(changed);
  }

 private:
  explicit DictionaryStore(DictionaryStoreConfig config);
  absl::Status LoadAll();
  // Loads one metadata file (a format 1 file is converted first); false when skipped.
  bool LoadOne(const std::string& id, const std::string& path);
  std::string MetadataPath(std::string_view id) const;
  std::string VersionsDir(std::string_view id) const;
  std::string VersionPath(std::string_view id, std::string_view version_id) const;
  // One version's lexicon from its file (startup's latest, Version's older ones).
  absl::StatusOr<std::shared_ptr<const text::lexicon::Lexicon>> ReadVersion(
      std::string_view id, std::string_view version_id) const;
  // Writes the versions of `entry` that `replaced` (null: a new dictionary) does not have, then
  // the metadata in place of `replaced`'s, within max_bytes unless `unbounded` (a conversion at
  // startup keeps what is there); then unlinks the files of the versions `entry` dropped. Fills
  // in the bytes. write_mutex_ held.
  absl::Status WriteLocked(StoredDictionary& entry, const StoredDictionary* replaced,
                           bool unbounded = false);
  // Puts `entry` in the index with only its latest lexicon; the one it replaces, if any, goes
  // to the cache of older versions. write_mutex_ held.
  void IndexLocked(std::shared_ptr<StoredDictionary> entry);
  void CacheOlder(const std::string& id, const DictionaryVersion& version) const;
  void ForgetOlder(std::string_view id) const;
  // Update's and Patch's copy on write: `change` edits a copy of `id`'s record (under
  // write_mutex_), which is written, replaces the entry, and is reported to on_changed_.
  absl::StatusOr<DictionaryInfo> Rewrite(
      std::string_view id, const std::function<absl::Status(DictionaryRecord&)>& change);

  std::function<void(const std::string& id)> on_changed_;
  std::mutex write_mutex_;  // one change at a time
  uint64_t id_state_ = 0;   // write_mutex_
  // Older versions' lexicons lately asked for, most recent first ("<id>/<version_id>").
  mutable std::mutex older_mutex_;
  mutable std::list<std::pair<std::string, std::shared_ptr<const text::lexicon::Lexicon>>>
      older_;  // older_mutex_
};

}  // namespace voxserve::store
