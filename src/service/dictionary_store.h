// Pronunciation dictionaries kept by the server (docs/pronunciation-dictionaries.md): one file per
// dictionary in the configured directory, holding its metadata and its versions. As ElevenLabs
// does, every change of a dictionary's rules makes a new version with its own id and leaves the
// earlier ones as they were, so a request pinned to a version (a locator with version_id) always
// speaks the same way; the newest `max_versions` versions of a dictionary are kept. Everything
// is held in memory (dictionaries are small: bounded in count, bytes and rules); the disk is
// written on every change (temporary file, fsync, rename, fsync of the directory) and read at
// startup. One machine only: another process's writes are not seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "text/lexicon/lexicon.h"

namespace voxserve::service {

// YAML dictionaries.* (server_config.cc).
struct DictionaryStoreConfig {
  std::string dir;                       // empty: the dictionaries API is off
  int max_count = 1000;                  // dictionaries, archived ones included
  size_t max_bytes = 64ull << 20;        // their files together
  size_t max_upload_bytes = 2ull << 20;  // one PLS/JSON file or rules body
  int max_versions = 32;                 // kept per dictionary; older ones are dropped
  text::lexicon::LexiconLimits limits;   // per version (rules, their lengths)

  bool enabled() const { return !dir.empty(); }
  absl::Status Validate() const;  // InvalidArgument naming the dictionaries.* key
};

struct DictionaryVersion {
  std::string version_id;                                 // "pdv_" + 20 lower-case hex digits
  int64_t created_at = 0;                                 // Unix seconds
  std::shared_ptr<const text::lexicon::Lexicon> lexicon;  // never null
};

struct DictionaryInfo {
  std::string id;  // "pd_" + 20 lower-case hex digits
  std::string name;
  std::string description;
  int64_t created_at = 0;              // Unix seconds
  std::optional<int64_t> archived_at;  // set while archived
  DictionaryVersion latest;            // the newest version
  size_t file_bytes = 0;
};

// Safe cross thread: one mutex guards the index; writes happen under it (they are small and
// rare). Every call may wait for the disk except Get, List, Version and TotalBytes, which
// answer from memory (I/O threads may call those).
class DictionaryStore {
 public:
  // Creates `config.dir` if needed and loads every dictionary file in it. Leftover temporary
  // files (a write interrupted by a crash) are removed; corrupt or foreign files are skipped with
  // a warning. Fails only when the directory cannot be created or read.
  static absl::StatusOr<std::unique_ptr<DictionaryStore>> Create(DictionaryStoreConfig config);

  // A new dictionary whose first version is `lexicon`. InvalidArgument "invalid_dictionary_name"
  // for a name of 0 or over 200 bytes (or not UTF-8, or with control characters),
  // "invalid_description" for a description over 1000 bytes (or not UTF-8),
  // "invalid_dictionary" for a lexicon outside config.limits; ResourceExhausted
  // "dictionary_limit_reached" (HTTP 507) at max_count, "dictionary_storage_full" (507) past
  // max_bytes; Internal when the write fails (nothing is left behind).
  absl::StatusOr<DictionaryInfo> Add(std::string_view name, std::string_view description,
                                     text::lexicon::Lexicon lexicon);
  // A new version made by `edit` from the latest version's lexicon (add-rules, remove-rules,
  // set-rules), atomically with respect to other updates of the same dictionary. `edit`'s error
  // is returned as is; NotFound "dictionary_not_found" for an unknown id; the bounds as Add.
  // The oldest versions beyond max_versions are dropped. `edit` runs under the store's lock (so
  // that no update is lost): it must not call the store.
  absl::StatusOr<DictionaryInfo> Update(
      std::string_view id,
      const std::function<absl::StatusOr<text::lexicon::Lexicon>(const text::lexicon::Lexicon&)>&
          edit);
  // ElevenLabs' PATCH: a new name and/or archived state (archived_at set to now when it turns
  // true, cleared when false). No new version. Errors as Add/Update.
  absl::StatusOr<DictionaryInfo> Patch(std::string_view id, std::optional<std::string> name,
                                       std::optional<bool> archived);
  // Removes the file (unlink, fsync the directory) and the entry. NotFound for unknown ids.
  absl::Status Delete(std::string_view id);

  std::optional<DictionaryInfo> Get(std::string_view id) const;
  // Newest first (ElevenLabs' default order); archived ones only when asked.
  std::vector<DictionaryInfo> List(bool include_archived) const;
  // A version of a dictionary; empty version_id: the latest. NotFound "dictionary_not_found" or
  // "dictionary_version_not_found" (param "version_id"; also for versions dropped by
  // max_versions).
  absl::StatusOr<DictionaryVersion> Version(std::string_view id, std::string_view version_id) const;
  size_t TotalBytes() const;
  const DictionaryStoreConfig& config() const { return config_; }

  // Called with a dictionary's id after each Update, Patch and Delete (the response cache drops
  // what it made), on the calling thread, outside the store's lock. Set once, before use.
  void SetOnChanged(std::function<void(const std::string& id)> changed) {
    on_changed_ = std::move(changed);
  }

 private:
  struct Entry;  // metadata + every kept version
  explicit DictionaryStore(DictionaryStoreConfig config);
  absl::Status LoadAll();
  std::string PathFor(std::string_view id) const;
  // Encodes `entry` and writes its file in place of `replaced` (null: a new dictionary), within
  // max_bytes; fills in file_bytes. mutex_ held.
  absl::Status WriteLocked(Entry& entry, const Entry* replaced);
  // Puts `entry` in the index in place of what it had under that id. mutex_ held.
  void IndexLocked(std::shared_ptr<const Entry> entry);
  std::string NewIdLocked(std::string_view prefix);

  const DictionaryStoreConfig config_;
  std::function<void(const std::string& id)> on_changed_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Entry>, std::less<>> entries_;  // by id; mutex_
  size_t total_bytes_ = 0;                                                    // mutex_
  uint64_t id_state_ = 0;                                                     // mutex_
};

bool IsDictionaryId(std::string_view id);

}  // namespace voxserve::service
