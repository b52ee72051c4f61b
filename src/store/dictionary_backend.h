// Where pronunciation dictionaries live (docs/pronunciation-dictionaries.md), behind one
// interface: a directory (DictionaryStore, one machine) or PostgreSQL (PostgresDictionaryStore,
// every replica sharing one registry). As ElevenLabs does, every change of a dictionary's rules
// makes a new version with its own id and leaves the earlier ones as they were, so a request
// pinned to a version (a locator with version_id) always speaks the same way; the newest
// `max_versions` versions of a dictionary are kept. Both backends hold every dictionary in
// memory (they are small: bounded in count, bytes and rules), so reads never wait.
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
#include "text/lexicon/lexicon.h"

namespace voxserve::store {

// YAML dictionaries.* (config_schema.cc). The postgres backend connects with voices.postgres.*
// (one database for the whole registry), passed beside this when the store is created.
struct DictionaryStoreConfig {
  std::string backend = "dir";           // "dir" or "postgres"
  std::string dir;                       // dir backend; empty there: the dictionaries API is off
  int max_count = 1000;                  // dictionaries, archived ones included
  size_t max_bytes = 64ull << 20;        // their encoded files (or rows) together
  size_t max_upload_bytes = 2ull << 20;  // one PLS/JSON file or rules body
  int max_versions = 32;                 // kept per dictionary; older ones are dropped
  text::lexicon::LexiconLimits limits;   // per version (rules, their lengths)

  bool enabled() const { return backend == "postgres" || !dir.empty(); }
  absl::Status Validate() const;  // InvalidArgument naming the dictionaries.* key
};

struct DictionaryVersion {
  std::string version_id;  // "pdv_" + 20 lower-case hex digits
  int64_t created_at = 0;  // Unix seconds
  // Never null in what Version() and Get() return. Inside the dir store's index, null for the
  // versions before the latest: they stay on disk until asked for (bounded memory).
  std::shared_ptr<const text::lexicon::Lexicon> lexicon;
  size_t bytes = 0;  // dir store: the size of its file
};

struct DictionaryInfo {
  std::string id;  // "pd_" + 20 lower-case hex digits
  std::string name;
  std::string description;
  int64_t created_at = 0;              // Unix seconds
  std::optional<int64_t> archived_at;  // set while archived
  DictionaryVersion latest;            // the newest version
  size_t file_bytes = 0;               // its encoding (store/dictionary_file.h)
};

// A lexicon edit of Update: the latest version's lexicon in, the next one out.
using DictionaryEdit =
    std::function<absl::StatusOr<text::lexicon::Lexicon>(const text::lexicon::Lexicon&)>;

// Safe cross thread. Get, List, Version, TotalBytes and Problem answer from memory (I/O threads
// may call them); Add, Update, Patch and Delete may wait for the disk or the database
// (PronunciationDictionaries runs them on its own thread).
class DictionaryBackend {
 public:
  virtual ~DictionaryBackend() = default;

  // A new dictionary whose first version is `lexicon`. InvalidArgument "invalid_dictionary_name"
  // for a name of 0 or over 200 bytes (or not UTF-8, or with control characters),
  // "invalid_description" for a description over 1000 bytes (or not UTF-8),
  // "invalid_dictionary" for a lexicon outside config.limits; ResourceExhausted
  // "dictionary_limit_reached" (HTTP 507) at max_count, "dictionary_storage_full" (507) past
  // max_bytes; Unavailable "dictionary_store_unavailable" (503) while the database cannot be
  // reached; Internal when the write fails (nothing is left behind).
  virtual absl::StatusOr<DictionaryInfo> Add(std::string_view name, std::string_view description,
                                             text::lexicon::Lexicon lexicon) = 0;
  // A new version made by `edit` from the latest version's lexicon (add-rules, remove-rules,
  // set-rules), atomically with respect to other updates of the same dictionary, on any replica.
  // `edit`'s error is returned as is; NotFound "dictionary_not_found" for an unknown id; the
  // bounds and Unavailable as Add. The oldest versions beyond max_versions are dropped. `edit`
  // runs while the dictionary is locked (so that no update is lost): it must not call the store.
  virtual absl::StatusOr<DictionaryInfo> Update(std::string_view id,
                                                const DictionaryEdit& edit) = 0;
  // ElevenLabs' PATCH: a new name and/or archived state (archived_at set to now when it turns
  // true, cleared when false). No new version. Errors as Add/Update.
  virtual absl::StatusOr<DictionaryInfo> Patch(std::string_view id, std::optional<std::string> name,
                                               std::optional<bool> archived) = 0;
  // Removes the dictionary. NotFound for unknown ids; Unavailable as Add.
  virtual absl::Status Delete(std::string_view id) = 0;

  virtual std::optional<DictionaryInfo> Get(std::string_view id) const = 0;
  // Newest first (ElevenLabs' default order); archived ones only when asked.
  virtual std::vector<DictionaryInfo> List(bool include_archived) const = 0;
  // A version of a dictionary; empty version_id: the latest. NotFound "dictionary_not_found" or
  // "dictionary_version_not_found" (param "version_id"; also for versions dropped by
  // max_versions).
  virtual absl::StatusOr<DictionaryVersion> Version(std::string_view id,
                                                    std::string_view version_id) const = 0;
  virtual size_t TotalBytes() const = 0;
  virtual const DictionaryStoreConfig& config() const = 0;
  virtual std::string_view BackendName() const = 0;  // "dir" or "postgres": /health
  // Why the store cannot take changes right now (the database is down, its schema is too new);
  // empty when it can. /health reports it (status degraded).
  virtual std::string Problem() const { return {}; }

  // Called with a dictionary's id after each Update, Patch and Delete, and (postgres) for each
  // dictionary another replica changed or deleted, so that the response cache drops what it
  // made. On the calling thread or the backend's own, never under the store's index lock. Set
  // before the store is used for requests.
  virtual void SetOnChanged(std::function<void(const std::string& id)> changed) = 0;
};

bool IsDictionaryId(std::string_view id);

}  // namespace voxserve::store
