// The `dir` backend of pronunciation dictionaries (service/dictionary_backend.h): one file per
// dictionary in the configured directory, holding its metadata and its kept versions. Everything
// is held in memory; the disk is written on every change (temporary file, fsync, rename, fsync of
// the directory) and read at startup. One machine only: another process's writes are not seen.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "service/dictionary_backend.h"
#include "service/dictionary_records.h"

namespace voxserve::service {

// Safe cross thread: writes run one at a time under one mutex (they are small and rare); reads
// answer from the index and never wait for them.
class DictionaryStore : public IndexedDictionaryBackend {
 public:
  // Creates `config.dir` if needed and loads every dictionary file in it. Leftover temporary
  // files (a write interrupted by a crash) are removed; corrupt or foreign files are skipped with
  // a warning. Fails only when the directory cannot be created or read.
  static absl::StatusOr<std::unique_ptr<DictionaryStore>> Create(DictionaryStoreConfig config);

  // Each change writes the dictionary's file (Delete: unlink, fsync of the directory); Internal
  // when that fails (nothing is left behind).
  absl::StatusOr<DictionaryInfo> Add(std::string_view name, std::string_view description,
                                     text::lexicon::Lexicon lexicon) override;
  absl::StatusOr<DictionaryInfo> Update(std::string_view id, const DictionaryEdit& edit) override;
  absl::StatusOr<DictionaryInfo> Patch(std::string_view id, std::optional<std::string> name,
                                       std::optional<bool> archived) override;
  absl::Status Delete(std::string_view id) override;

  std::string_view BackendName() const override { return "dir"; }
  // Called on the writing thread, after the write mutex is released.
  void SetOnChanged(std::function<void(const std::string& id)> changed) override {
    on_changed_ = std::move(changed);
  }

 private:
  explicit DictionaryStore(DictionaryStoreConfig config);
  absl::Status LoadAll();
  std::string PathFor(std::string_view id) const;
  // Encodes `entry` and writes its file in place of `replaced` (null: a new dictionary), within
  // max_bytes; fills in its bytes. write_mutex_ held.
  absl::Status WriteLocked(StoredDictionary& entry, const StoredDictionary* replaced);
  // Update's and Patch's copy on write: `change` edits a copy of `id`'s record (under
  // write_mutex_), which is written, replaces the entry, and is reported to on_changed_.
  absl::StatusOr<DictionaryInfo> Rewrite(
      std::string_view id, const std::function<absl::Status(DictionaryRecord&)>& change);

  std::function<void(const std::string& id)> on_changed_;
  std::mutex write_mutex_;  // one change at a time
  uint64_t id_state_ = 0;   // write_mutex_
};

}  // namespace voxserve::service
