#include "store/dictionary_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

#include "core/error.h"
#include "spdlog/spdlog.h"
#include "store/dictionary_file.h"
#include "store/durable_file.h"

namespace voxserve::store {
namespace {

namespace fs = std::filesystem;
using text::lexicon::Lexicon;

constexpr std::string_view kSuffix = ".json";
constexpr std::string_view kVersionsSuffix = ".versions";

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

DictionaryStore::DictionaryStore(DictionaryStoreConfig config)
    : IndexedDictionaryBackend(std::move(config)), id_state_(RandomDictionaryIdState()) {}

absl::StatusOr<std::unique_ptr<DictionaryStore>> DictionaryStore::Create(
    DictionaryStoreConfig config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  if (config.dir.empty()) return core::InvalidArgument("dictionaries.dir is not set");
  std::unique_ptr<DictionaryStore> store(new DictionaryStore(std::move(config)));
  if (absl::Status status = store->LoadAll(); !status.ok()) return status;
  return store;
}

std::string DictionaryStore::MetadataPath(std::string_view id) const {
  return (fs::path(config_.dir) / (std::string(id) + std::string(kSuffix))).string();
}

std::string DictionaryStore::VersionsDir(std::string_view id) const {
  return (fs::path(config_.dir) / (std::string(id) + std::string(kVersionsSuffix))).string();
}

std::string DictionaryStore::VersionPath(std::string_view id, std::string_view version_id) const {
  return (fs::path(VersionsDir(id)) / (std::string(version_id) + std::string(kSuffix))).string();
}

absl::Status DictionaryStore::LoadAll() {
  auto entries = OpenStoreDirectory(config_.dir, "dictionaries.dir", "dictionaries");
  if (!entries.ok()) return entries.status();
  std::error_code ec;
  std::lock_guard lock(write_mutex_);
  std::vector<std::pair<std::string, fs::path>> versions_dirs;  // id, path
  std::set<std::string> with_metadata;
  for (const fs::directory_entry& file : *entries) {
    const std::string path = file.path().string();
    const std::string name = file.path().filename().string();
    if (name.ends_with(kVersionsSuffix) && file.is_directory(ec)) {
      versions_dirs.emplace_back(name.substr(0, name.size() - kVersionsSuffix.size()), file.path());
      continue;
    }
    const std::string id =
        name.ends_with(kSuffix) ? name.substr(0, name.size() - kSuffix.size()) : std::string();
    if (!IsDictionaryId(id) || !file.is_regular_file(ec)) {
      spdlog::warn("dictionaries: skipping {}: not a dictionary file name", path);
      continue;
    }
    with_metadata.insert(id);
    LoadOne(id, path);
  }
  // Versions of a dictionary whose metadata is gone (a deletion interrupted after its unlink).
  for (const auto& [id, path] : versions_dirs) {
    if (with_metadata.contains(id) || !IsDictionaryId(id)) continue;
    spdlog::warn("dictionaries: removing {}: its dictionary was deleted", path.string());
    fs::remove_all(path, ec);
  }
  spdlog::info("dictionaries: {} pronunciation dictionar{} in {} ({} bytes)", index_.size(),
               index_.size() == 1 ? "y" : "ies", config_.dir, index_.TotalBytes());
  return absl::OkStatus();
}

bool DictionaryStore::LoadOne(const std::string& id, const std::string& path) {
  auto skip = [&](const absl::Status& why) {
    spdlog::warn("dictionaries: skipping {}: {}", path, std::string(why.message()));
    return false;
  };
  auto bytes = ReadWhole(path, config_.max_bytes, "dictionaries.max_bytes");
  if (!bytes.ok()) return skip(bytes.status());
  auto format = DictionaryFileFormat(*bytes);
  if (!format.ok()) return skip(format.status());
  const bool inline_versions = *format == 1;
  auto record = inline_versions ? DecodeDictionaryFile(*bytes, config_.limits)
                                : DecodeDictionaryMetadata(*bytes);
  absl::Status valid = record.status();
  if (valid.ok() && record->id != id) valid = core::InvalidArgument("its id is " + record->id);
  if (valid.ok()) valid = ValidateDictionaryName(record->name);
  if (valid.ok()) valid = ValidateDictionaryDescription(record->description);
  if (!valid.ok()) return skip(valid);
  auto entry = std::make_shared<StoredDictionary>(StoredDictionary{*std::move(record)});
  std::vector<DictionaryVersion>& versions = entry->record.versions;
  if (inline_versions) {
    // Format 1 (every version in this file): converted once, each version to its own file;
    // the rename of the new metadata over this file is the switch. Bounds are checked on
    // changes, not here: nothing already stored is dropped behind the operator's back.
    if (absl::Status status = WriteLocked(*entry, nullptr, /*unbounded=*/true); !status.ok()) {
      return skip(status);
    }
    spdlog::info("dictionaries: {} converted to one file per version", id);
  } else {
    auto lexicon = ReadVersion(id, versions.back().version_id);
    if (!lexicon.ok()) return skip(lexicon.status());
    versions.back().lexicon = *std::move(lexicon);
    // An older version whose file is missing is dropped; files no version names are removed.
    std::set<std::string> named;
    std::erase_if(versions, [&](const DictionaryVersion& v) {
      std::error_code ec;
      const bool there = v.lexicon || fs::exists(VersionPath(id, v.version_id), ec);
      if (!there) spdlog::warn("dictionaries: {}: version {} has no file", id, v.version_id);
      if (there) named.insert(v.version_id + std::string(kSuffix));
      return !there;
    });
    std::error_code ec;
    for (const fs::directory_entry& file : fs::directory_iterator(VersionsDir(id), ec)) {
      if (!named.contains(file.path().filename().string())) {
        spdlog::warn("dictionaries: removing {}: no version names it", file.path().string());
        fs::remove(file.path(), ec);
      }
    }
    entry->bytes = bytes->size();
    for (const DictionaryVersion& v : versions) entry->bytes += v.bytes;
  }
  IndexLocked(std::move(entry));
  return true;
}

absl::Status DictionaryStore::WriteLocked(StoredDictionary& entry, const StoredDictionary* replaced,
                                          bool unbounded) {
  const std::string& id = entry.record.id;
  std::set<std::string, std::less<>> kept_before;
  if (replaced != nullptr) {
    for (const DictionaryVersion& v : replaced->record.versions) kept_before.insert(v.version_id);
  }
  std::vector<std::pair<std::string, std::string>> new_files;  // path, bytes
  for (DictionaryVersion& version : entry.record.versions) {
    if (kept_before.contains(version.version_id)) continue;
    std::string bytes = EncodeLexiconFile(*version.lexicon);
    version.bytes = bytes.size();
    new_files.emplace_back(VersionPath(id, version.version_id), std::move(bytes));
  }
  const std::string metadata = EncodeDictionaryMetadata(entry.record);
  size_t total = metadata.size();
  for (const DictionaryVersion& version : entry.record.versions) total += version.bytes;
  const size_t others = index_.TotalBytes() - (replaced != nullptr ? replaced->bytes : 0);
  if (!unbounded && others + total > config_.max_bytes) {
    return DictionaryStorageFull(config_.max_bytes);
  }
  std::error_code ec;
  auto undo_new_files = [&] {
    for (const auto& [path, bytes] : new_files) fs::remove(path, ec);
  };
  // The new versions first, durably: nothing names them until the metadata does.
  if (!new_files.empty()) {
    fs::create_directory(VersionsDir(id), ec);
    if (ec == std::errc::no_space_on_device) {
      return core::InsufficientStorage("cannot create " + VersionsDir(id) + ": " + ec.message(),
                                       "disk_full");
    }
    if (ec) return core::Internal("cannot create " + VersionsDir(id) + ": " + ec.message());
    for (const auto& [path, bytes] : new_files) {
      if (absl::Status status = WriteAndSync(path, bytes); !status.ok()) {
        undo_new_files();
        return status;
      }
    }
    if (absl::Status status = SyncDirectory(VersionsDir(id)); !status.ok()) {
      undo_new_files();
      return status;
    }
  }
  // Then the metadata, atomically. Writes happen under write_mutex_, so one temporary name per
  // dictionary and process is enough.
  const std::string path = MetadataPath(id);
  if (absl::Status status = ReplaceDurably(path, metadata); !status.ok()) {
    undo_new_files();
    return status;
  }
  if (absl::Status status = SyncDirectory(config_.dir); !status.ok()) {
    if (replaced == nullptr) {
      fs::remove(path, ec);
      undo_new_files();
      return status;
    }
    // The new file has already replaced the old one, which cannot be brought back: the index
    // follows the file, and only the rename's durability is in doubt.
    spdlog::warn("dictionaries: {}", std::string(status.message()));
  }
  // The versions it no longer keeps. Not synced: a file left by a crash is removed at startup.
  if (replaced != nullptr) {
    for (const DictionaryVersion& v : replaced->record.versions) {
      const bool kept =
          std::any_of(entry.record.versions.begin(), entry.record.versions.end(),
                      [&](const DictionaryVersion& now) { return now.version_id == v.version_id; });
      if (!kept) fs::remove(VersionPath(id, v.version_id), ec);
    }
  }
  entry.bytes = total;
  return absl::OkStatus();
}

void DictionaryStore::IndexLocked(std::shared_ptr<StoredDictionary> entry) {
  std::vector<DictionaryVersion>& versions = entry->record.versions;
  for (size_t i = 0; i + 1 < versions.size(); ++i) {
    if (!versions[i].lexicon) continue;
    // The version an update just superseded is the one pinned requests are likeliest to ask
    // for next.
    if (i + 2 == versions.size()) CacheOlder(entry->record.id, versions[i]);
    versions[i].lexicon.reset();
  }
  index_.Put(std::move(entry));
}

void DictionaryStore::CacheOlder(const std::string& id, const DictionaryVersion& version) const {
  std::string key = id + "/" + version.version_id;
  std::lock_guard lock(older_mutex_);
  std::erase_if(older_, [&](const auto& cached) { return cached.first == key; });
  older_.emplace_front(std::move(key), version.lexicon);
  if (older_.size() > kCachedOlderVersions) older_.pop_back();
}

void DictionaryStore::ForgetOlder(std::string_view id) const {
  const std::string prefix = std::string(id) + "/";
  std::lock_guard lock(older_mutex_);
  std::erase_if(older_, [&](const auto& cached) { return cached.first.starts_with(prefix); });
}

absl::StatusOr<std::shared_ptr<const text::lexicon::Lexicon>> DictionaryStore::ReadVersion(
    std::string_view id, std::string_view version_id) const {
  auto bytes = ReadWhole(VersionPath(id, version_id), config_.max_bytes, "dictionaries.max_bytes");
  if (!bytes.ok()) return bytes.status();
  auto lexicon = DecodeLexiconFile(*bytes, config_.limits);
  if (!lexicon.ok()) return lexicon.status();
  return std::make_shared<const text::lexicon::Lexicon>(*std::move(lexicon));
}

absl::StatusOr<DictionaryVersion> DictionaryStore::Version(std::string_view id,
                                                           std::string_view version_id) const {
  auto version = index_.Version(id, version_id, config_.max_versions);
  if (!version.ok() || version->lexicon) return version;
  const std::string key = std::string(id) + "/" + version->version_id;
  {
    std::lock_guard lock(older_mutex_);
    auto it = std::find_if(older_.begin(), older_.end(),
                           [&](const auto& cached) { return cached.first == key; });
    if (it != older_.end()) {
      older_.splice(older_.begin(), older_, it);
      version->lexicon = it->second;
      return version;
    }
  }
  auto lexicon = ReadVersion(id, version->version_id);
  if (!lexicon.ok()) {
    // Dropped by an update meanwhile: the index now says so.
    auto again = index_.Version(id, version_id, config_.max_versions);
    if (!again.ok()) return again.status();
    return core::Internal("pronunciation dictionary " + std::string(id) + " version " +
                          version->version_id +
                          " cannot be read: " + std::string(lexicon.status().message()));
  }
  version->lexicon = *std::move(lexicon);
  CacheOlder(std::string(id), *version);
  return version;
}

absl::StatusOr<DictionaryInfo> DictionaryStore::Add(std::string_view name,
                                                    std::string_view description, Lexicon lexicon) {
  std::lock_guard lock(write_mutex_);
  auto record = NewDictionaryRecord(name, description, std::move(lexicon), config_, id_state_);
  if (!record.ok()) return record.status();
  if (index_.size() >= static_cast<size_t>(config_.max_count)) {
    return DictionaryLimitReached(config_.max_count);
  }
  while (index_.Find(record->id)) record->id = NewDictionaryId(kDictionaryIdPrefix, id_state_);
  auto entry = std::make_shared<StoredDictionary>(StoredDictionary{*std::move(record)});
  if (absl::Status status = WriteLocked(*entry, nullptr); !status.ok()) return status;
  DictionaryInfo info = DictionaryInfoOf(*entry);
  IndexLocked(std::move(entry));
  return info;
}

absl::StatusOr<DictionaryInfo> DictionaryStore::Rewrite(
    std::string_view id, const std::function<absl::Status(DictionaryRecord&)>& change) {
  DictionaryInfo info;
  {
    std::lock_guard lock(write_mutex_);
    std::shared_ptr<const StoredDictionary> current = index_.Find(id);
    if (!current) return DictionaryNotFound(id);
    // Copy on write: readers holding the current entry (or any of its versions) keep it as is.
    auto next = std::make_shared<StoredDictionary>(*current);
    if (absl::Status status = change(next->record); !status.ok()) return status;
    if (absl::Status status = WriteLocked(*next, current.get()); !status.ok()) return status;
    info = DictionaryInfoOf(*next);
    IndexLocked(std::move(next));
  }
  if (on_changed_) on_changed_(info.id);
  return info;
}

absl::StatusOr<DictionaryInfo> DictionaryStore::Update(std::string_view id,
                                                       const DictionaryEdit& edit) {
  return Rewrite(id, [&](DictionaryRecord& record) {
    return AddDictionaryVersion(record, edit, config_, id_state_);  // write_mutex_ held
  });
}

absl::StatusOr<DictionaryInfo> DictionaryStore::Patch(std::string_view id,
                                                      std::optional<std::string> name,
                                                      std::optional<bool> archived) {
  if (name) {
    if (absl::Status status = ValidateDictionaryName(*name); !status.ok()) return status;
  }
  return Rewrite(id, [&](DictionaryRecord& record) {
    return PatchDictionaryRecord(record, std::move(name), archived);
  });
}

absl::Status DictionaryStore::Delete(std::string_view id) {
  const std::string deleted(id);
  {
    std::lock_guard lock(write_mutex_);
    if (!index_.Find(id)) return DictionaryNotFound(id);
    // The metadata's unlink is the deletion (atomic); its versions go after it.
    if (::unlink(MetadataPath(id).c_str()) != 0 && errno != ENOENT) {
      return core::Internal("cannot delete dictionary " + deleted + ": " + ErrnoText());
    }
    // The name is gone either way; a failed sync only leaves its durability in doubt, and
    // keeping an entry whose file is gone would be worse.
    if (absl::Status status = SyncDirectory(config_.dir); !status.ok()) {
      spdlog::warn("dictionaries: {}", std::string(status.message()));
    }
    std::error_code ec;
    fs::remove_all(VersionsDir(id), ec);  // what is left is removed at startup
    if (ec) spdlog::warn("dictionaries: cannot remove {}: {}", VersionsDir(id), ec.message());
    index_.Erase(id);
    ForgetOlder(id);
  }
  if (on_changed_) on_changed_(deleted);
  return absl::OkStatus();
}

}  // namespace voxserve::store
