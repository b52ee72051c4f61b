#include "service/dictionary_store.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "core/error.h"
#include "service/dictionary_file.h"
#include "service/durable_file.h"
#include "spdlog/spdlog.h"

namespace voxserve::service {
namespace {

namespace fs = std::filesystem;
using text::lexicon::Lexicon;

constexpr std::string_view kSuffix = ".json";
constexpr std::string_view kTempMarker = ".tmp-";

std::string ErrnoText() { return std::strerror(errno); }

}  // namespace

DictionaryStore::DictionaryStore(DictionaryStoreConfig config)
    : IndexedDictionaryBackend(std::move(config)), id_state_(RandomDictionaryIdState()) {}

absl::StatusOr<std::unique_ptr<DictionaryStore>> DictionaryStore::Create(
    DictionaryStoreConfig config) {
  if (absl::Status status = config.Validate(); !status.ok()) return status;
  if (config.dir.empty()) return core::InvalidArgument("dictionaries.dir is not set");
  std::error_code ec;
  fs::create_directories(config.dir, ec);
  if (ec) {
    return core::Internal("cannot create dictionaries.dir " + config.dir + ": " + ec.message());
  }
  std::unique_ptr<DictionaryStore> store(new DictionaryStore(std::move(config)));
  if (absl::Status status = store->LoadAll(); !status.ok()) return status;
  return store;
}

std::string DictionaryStore::PathFor(std::string_view id) const {
  return (fs::path(config_.dir) / (std::string(id) + std::string(kSuffix))).string();
}

absl::Status DictionaryStore::LoadAll() {
  std::error_code ec;
  fs::directory_iterator it(config_.dir, ec);
  if (ec) {
    return core::Internal("cannot read dictionaries.dir " + config_.dir + ": " + ec.message());
  }
  std::lock_guard lock(write_mutex_);
  for (const fs::directory_entry& file : it) {
    const std::string path = file.path().string();
    const std::string name = file.path().filename().string();
    if (name.front() == '.' && name.find(kTempMarker) != std::string::npos) {
      // A change interrupted before its rename: the file it was to replace is still whole.
      spdlog::warn("dictionaries: removing interrupted write {}", path);
      fs::remove(file.path(), ec);
      continue;
    }
    const std::string id =
        name.ends_with(kSuffix) ? name.substr(0, name.size() - kSuffix.size()) : std::string();
    if (!IsDictionaryId(id) || !file.is_regular_file(ec)) {
      spdlog::warn("dictionaries: skipping {}: not a dictionary file name", path);
      continue;
    }
    auto bytes = ReadWhole(path, config_.max_bytes, "dictionaries.max_bytes");
    auto record = bytes.ok() ? DecodeDictionaryFile(*bytes, config_.limits)
                             : absl::StatusOr<DictionaryRecord>(bytes.status());
    absl::Status valid = record.status();
    if (valid.ok() && record->id != id) valid = core::InvalidArgument("its id is " + record->id);
    if (valid.ok()) valid = ValidateDictionaryName(record->name);
    if (valid.ok()) valid = ValidateDictionaryDescription(record->description);
    if (!valid.ok()) {
      spdlog::warn("dictionaries: skipping {}: {}", path, std::string(valid.message()));
      continue;
    }
    // Bounds are checked on changes; files already here are kept even if the operator lowered
    // the limits (nothing is deleted behind their back; extra versions go at the next update).
    index_.Put(std::make_shared<const StoredDictionary>(
        StoredDictionary{*std::move(record), bytes->size()}));
  }
  spdlog::info("dictionaries: {} pronunciation dictionar{} in {} ({} bytes)", index_.size(),
               index_.size() == 1 ? "y" : "ies", config_.dir, index_.TotalBytes());
  return absl::OkStatus();
}

absl::Status DictionaryStore::WriteLocked(StoredDictionary& entry,
                                          const StoredDictionary* replaced) {
  const std::string bytes = EncodeDictionaryFile(entry.record);
  const size_t others = index_.TotalBytes() - (replaced != nullptr ? replaced->bytes : 0);
  if (others + bytes.size() > config_.max_bytes) return DictionaryStorageFull(config_.max_bytes);
  const std::string path = PathFor(entry.record.id);
  // Writes happen under write_mutex_, so one temporary name per dictionary and process is enough.
  const std::string temp =
      (fs::path(config_.dir) / ("." + entry.record.id + std::string(kSuffix) +
                                std::string(kTempMarker) + std::to_string(::getpid())))
          .string();
  std::error_code ec;
  if (absl::Status status = WriteAndSync(temp, bytes); !status.ok()) {
    fs::remove(temp, ec);
    return status;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    std::string why = ErrnoText();
    fs::remove(temp, ec);
    return core::Internal("cannot rename " + temp + ": " + why);
  }
  if (absl::Status status = SyncDirectory(config_.dir); !status.ok()) {
    if (replaced == nullptr) {
      fs::remove(path, ec);
      return status;
    }
    // The new file has already replaced the old one, which cannot be brought back: the index
    // follows the file, and only the rename's durability is in doubt.
    spdlog::warn("dictionaries: {}", std::string(status.message()));
  }
  entry.bytes = bytes.size();
  return absl::OkStatus();
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
  index_.Put(std::move(entry));
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
    index_.Put(std::move(next));
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
    if (::unlink(PathFor(id).c_str()) != 0 && errno != ENOENT) {
      return core::Internal("cannot delete dictionary " + deleted + ": " + ErrnoText());
    }
    // The name is gone either way (unlink is atomic); a failed sync only leaves its durability
    // in doubt, and keeping an entry whose file is gone would be worse.
    if (absl::Status status = SyncDirectory(config_.dir); !status.ok()) {
      spdlog::warn("dictionaries: {}", std::string(status.message()));
    }
    index_.Erase(id);
  }
  if (on_changed_) on_changed_(deleted);
  return absl::OkStatus();
}

}  // namespace voxserve::service
