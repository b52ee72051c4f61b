#include "service/dictionary_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include "core/error.h"
#include "service/dictionary_file.h"
#include "service/durable_file.h"
#include "spdlog/spdlog.h"
#include "text/utf8.h"

namespace voxserve::service {

struct DictionaryStore::Entry {
  DictionaryRecord record;
  size_t file_bytes = 0;
};

namespace {

namespace fs = std::filesystem;
using text::lexicon::Lexicon;

constexpr std::string_view kSuffix = ".json";
constexpr std::string_view kTempMarker = ".tmp-";
constexpr size_t kMaxNameBytes = 200;  // ElevenLabs' limit is not published; fits any UI
constexpr size_t kMaxDescriptionBytes = 1000;
constexpr int kMaxVersionsBound = 1000;  // a file of 1000 versions of a large lexicon is
                                         // already far past a sensible max_bytes

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string ErrnoText() { return std::strerror(errno); }

absl::Status ValidateName(std::string_view name) {
  auto bad = [](const std::string& why) {
    return core::InvalidArgument("name " + why, "name", "invalid_dictionary_name");
  };
  if (name.empty() || name.size() > kMaxNameBytes) {
    return bad("must hold 1 to " + std::to_string(kMaxNameBytes) + " bytes");
  }
  if (!text::ValidateUtf8(name, "name").ok()) return bad("must be valid UTF-8");
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    // C0 controls, DEL, and the C1 controls U+0080..U+009F (UTF-8 C2 80..C2 9F).
    const bool c1 =
        c == 0xc2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) <= 0x9f;
    if (c < 0x20 || c == 0x7f || c1) return bad("must not contain control characters");
  }
  return absl::OkStatus();
}

absl::Status ValidateDescription(std::string_view description) {
  auto bad = [](const std::string& why) {
    return core::InvalidArgument("description " + why, "description", "invalid_description");
  };
  if (description.size() > kMaxDescriptionBytes) {
    return bad("must be at most " + std::to_string(kMaxDescriptionBytes) + " bytes");
  }
  if (!text::ValidateUtf8(description, "description").ok()) return bad("must be valid UTF-8");
  return absl::OkStatus();
}

absl::Status DictionaryNotFound(std::string_view id) {
  return core::NotFound("no pronunciation dictionary " + core::Quoted(id),
                        "pronunciation_dictionary_id", "dictionary_not_found");
}

DictionaryInfo InfoOf(const DictionaryRecord& record, size_t file_bytes) {
  return {record.id,         record.name,        record.description,
          record.created_at, record.archived_at, record.versions.back(),
          file_bytes};
}

}  // namespace

bool IsDictionaryId(std::string_view id) { return HasDictionaryIdShape(id, kDictionaryIdPrefix); }

absl::Status DictionaryStoreConfig::Validate() const {
  if (max_count < 1) return core::InvalidArgument("dictionaries.max_count must be at least 1");
  if (max_bytes < 1) return core::InvalidArgument("dictionaries.max_bytes must be at least 1");
  if (max_upload_bytes < 1) {
    return core::InvalidArgument("dictionaries.max_upload_bytes must be at least 1");
  }
  if (max_versions < 1 || max_versions > kMaxVersionsBound) {
    return core::InvalidArgument("dictionaries.max_versions must be 1.." +
                                 std::to_string(kMaxVersionsBound));
  }
  return absl::OkStatus();
}

DictionaryStore::DictionaryStore(DictionaryStoreConfig config) : config_(std::move(config)) {
  std::random_device device;
  id_state_ = (static_cast<uint64_t>(device()) << 32) ^ device();
}

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
  std::lock_guard lock(mutex_);
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
    if (valid.ok()) valid = ValidateName(record->name);
    if (valid.ok()) valid = ValidateDescription(record->description);
    if (!valid.ok()) {
      spdlog::warn("dictionaries: skipping {}: {}", path, std::string(valid.message()));
      continue;
    }
    // Bounds are checked on changes; files already here are kept even if the operator lowered
    // the limits (nothing is deleted behind their back; extra versions go at the next update).
    IndexLocked(std::make_shared<const Entry>(Entry{*std::move(record), bytes->size()}));
  }
  spdlog::info("dictionaries: {} pronunciation dictionar{} in {} ({} bytes)", entries_.size(),
               entries_.size() == 1 ? "y" : "ies", config_.dir, total_bytes_);
  return absl::OkStatus();
}

std::string DictionaryStore::NewIdLocked(std::string_view prefix) {
  std::mt19937_64 generator(id_state_);
  std::string id(prefix);
  while (id.size() < prefix.size() + kDictionaryIdHexDigits) {
    uint64_t bits = generator();
    for (int i = 0; i < 16 && id.size() < prefix.size() + kDictionaryIdHexDigits; ++i) {
      id.push_back("0123456789abcdef"[(bits >> (4 * i)) & 0xf]);
    }
  }
  id_state_ = generator();
  return id;
}

absl::Status DictionaryStore::WriteLocked(Entry& entry, const Entry* replaced) {
  const std::string bytes = EncodeDictionaryFile(entry.record);
  const size_t others = total_bytes_ - (replaced != nullptr ? replaced->file_bytes : 0);
  if (others + bytes.size() > config_.max_bytes) {
    return core::InsufficientStorage("the dictionary store is full (dictionaries.max_bytes = " +
                                         std::to_string(config_.max_bytes) +
                                         "); delete a dictionary first",
                                     "dictionary_storage_full");
  }
  const std::string path = PathFor(entry.record.id);
  // Writes happen under mutex_, so one temporary name per dictionary and process is enough.
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
  entry.file_bytes = bytes.size();
  return absl::OkStatus();
}

void DictionaryStore::IndexLocked(std::shared_ptr<const Entry> entry) {
  auto [it, added] = entries_.try_emplace(entry->record.id);
  if (!added) total_bytes_ -= it->second->file_bytes;
  total_bytes_ += entry->file_bytes;
  it->second = std::move(entry);
}

absl::StatusOr<DictionaryInfo> DictionaryStore::Add(std::string_view name,
                                                    std::string_view description, Lexicon lexicon) {
  if (absl::Status status = ValidateName(name); !status.ok()) return status;
  if (absl::Status status = ValidateDescription(description); !status.ok()) return status;
  if (absl::Status status = ValidateStoredLexicon(lexicon, config_.limits); !status.ok()) {
    return status;
  }
  auto entry = std::make_shared<Entry>();
  entry->record.name = std::string(name);
  entry->record.description = std::string(description);
  entry->record.created_at = NowSeconds();
  std::lock_guard lock(mutex_);
  if (entries_.size() >= static_cast<size_t>(config_.max_count)) {
    return core::InsufficientStorage("the dictionary store is full (dictionaries.max_count = " +
                                         std::to_string(config_.max_count) +
                                         "); delete a dictionary first",
                                     "dictionary_limit_reached");
  }
  do {
    entry->record.id = NewIdLocked(kDictionaryIdPrefix);
  } while (entries_.contains(entry->record.id));
  entry->record.versions.push_back({NewIdLocked(kDictionaryVersionIdPrefix),
                                    entry->record.created_at,
                                    std::make_shared<const Lexicon>(std::move(lexicon))});
  if (absl::Status status = WriteLocked(*entry, nullptr); !status.ok()) return status;
  DictionaryInfo info = InfoOf(entry->record, entry->file_bytes);
  IndexLocked(std::move(entry));
  return info;
}

absl::StatusOr<DictionaryInfo> DictionaryStore::Update(
    std::string_view id, const std::function<absl::StatusOr<Lexicon>(const Lexicon&)>& edit) {
  DictionaryInfo info;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return DictionaryNotFound(id);
    const Entry& current = *it->second;
    absl::StatusOr<Lexicon> edited = edit(*current.record.versions.back().lexicon);
    if (!edited.ok()) return edited.status();
    if (absl::Status status = ValidateStoredLexicon(*edited, config_.limits); !status.ok()) {
      return status;
    }
    // Copy on write: readers holding the current entry (or any of its versions) keep it as is.
    auto next = std::make_shared<Entry>(current);
    std::vector<DictionaryVersion>& versions = next->record.versions;
    std::string version_id;
    do {
      version_id = NewIdLocked(kDictionaryVersionIdPrefix);
    } while (std::any_of(versions.begin(), versions.end(),
                         [&](const DictionaryVersion& v) { return v.version_id == version_id; }));
    versions.push_back(
        {std::move(version_id), NowSeconds(), std::make_shared<const Lexicon>(*std::move(edited))});
    const size_t kept = static_cast<size_t>(config_.max_versions);
    if (versions.size() > kept) versions.erase(versions.begin(), versions.end() - kept);
    if (absl::Status status = WriteLocked(*next, &current); !status.ok()) return status;
    info = InfoOf(next->record, next->file_bytes);
    IndexLocked(std::move(next));
  }
  if (on_changed_) on_changed_(info.id);
  return info;
}

absl::StatusOr<DictionaryInfo> DictionaryStore::Patch(std::string_view id,
                                                      std::optional<std::string> name,
                                                      std::optional<bool> archived) {
  if (name) {
    if (absl::Status status = ValidateName(*name); !status.ok()) return status;
  }
  DictionaryInfo info;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return DictionaryNotFound(id);
    const Entry& current = *it->second;
    auto next = std::make_shared<Entry>(current);
    if (name) next->record.name = *std::move(name);
    if (archived.has_value()) {
      // Archiving an archived dictionary keeps the time it was first archived.
      if (!*archived) {
        next->record.archived_at.reset();
      } else if (!next->record.archived_at) {
        next->record.archived_at = NowSeconds();
      }
    }
    if (absl::Status status = WriteLocked(*next, &current); !status.ok()) return status;
    info = InfoOf(next->record, next->file_bytes);
    IndexLocked(std::move(next));
  }
  if (on_changed_) on_changed_(info.id);
  return info;
}

absl::Status DictionaryStore::Delete(std::string_view id) {
  std::string deleted;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return DictionaryNotFound(id);
    if (::unlink(PathFor(id).c_str()) != 0 && errno != ENOENT) {
      return core::Internal("cannot delete dictionary " + std::string(id) + ": " + ErrnoText());
    }
    // The name is gone either way (unlink is atomic); a failed sync only leaves its durability
    // in doubt, and keeping an entry whose file is gone would be worse.
    if (absl::Status status = SyncDirectory(config_.dir); !status.ok()) {
      spdlog::warn("dictionaries: {}", std::string(status.message()));
    }
    deleted = it->first;
    total_bytes_ -= it->second->file_bytes;
    entries_.erase(it);
  }
  if (on_changed_) on_changed_(deleted);
  return absl::OkStatus();
}

std::optional<DictionaryInfo> DictionaryStore::Get(std::string_view id) const {
  std::shared_ptr<const Entry> entry;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    entry = it->second;
  }
  return InfoOf(entry->record, entry->file_bytes);
}

std::vector<DictionaryInfo> DictionaryStore::List(bool include_archived) const {
  std::vector<std::shared_ptr<const Entry>> entries;
  {
    std::lock_guard lock(mutex_);
    entries.reserve(entries_.size());
    for (const auto& [id, entry] : entries_) entries.push_back(entry);
  }
  std::vector<DictionaryInfo> infos;
  infos.reserve(entries.size());
  for (const auto& entry : entries) {
    if (include_archived || !entry->record.archived_at) {
      infos.push_back(InfoOf(entry->record, entry->file_bytes));
    }
  }
  // Newest first; the id orders those of one second, so the order is the same on every call.
  std::sort(infos.begin(), infos.end(), [](const DictionaryInfo& a, const DictionaryInfo& b) {
    return std::tie(a.created_at, a.id) > std::tie(b.created_at, b.id);
  });
  return infos;
}

absl::StatusOr<DictionaryVersion> DictionaryStore::Version(std::string_view id,
                                                           std::string_view version_id) const {
  std::shared_ptr<const Entry> entry;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return DictionaryNotFound(id);
    entry = it->second;
  }
  const std::vector<DictionaryVersion>& versions = entry->record.versions;
  if (version_id.empty()) return versions.back();
  auto it = std::find_if(versions.begin(), versions.end(),
                         [&](const DictionaryVersion& v) { return v.version_id == version_id; });
  if (it == versions.end()) {
    return core::NotFound("pronunciation dictionary " + std::string(id) + " has no version " +
                              core::Quoted(version_id) + " (only the newest " +
                              std::to_string(config_.max_versions) + " are kept)",
                          "version_id", "dictionary_version_not_found");
  }
  return *it;
}

size_t DictionaryStore::TotalBytes() const {
  std::lock_guard lock(mutex_);
  return total_bytes_;
}

}  // namespace voxserve::service
