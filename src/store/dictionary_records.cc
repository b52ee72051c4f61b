#include "store/dictionary_records.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <tuple>
#include <utility>

#include "absl/strings/str_format.h"
#include "core/error.h"
#include "text/utf8.h"
#include "text/visible_text.h"

namespace voxserve::store {
namespace {

using text::lexicon::Lexicon;

constexpr size_t kMaxNameBytes = 200;  // ElevenLabs' limit is not published; fits any UI
constexpr size_t kMaxDescriptionBytes = 1000;
constexpr int kMaxVersionsBound = 1000;  // a file of 1000 versions of a large lexicon is
                                         // already far past a sensible max_bytes

}  // namespace

bool IsDictionaryId(std::string_view id) { return HasDictionaryIdShape(id, kDictionaryIdPrefix); }

absl::Status DictionaryStoreConfig::Validate() const {
  if (backend != "dir" && backend != "postgres") {
    return core::InvalidArgument("dictionaries.backend must be dir or postgres, not " +
                                 core::Quoted(backend));
  }
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

absl::Status ValidateDictionaryName(std::string_view name) {
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
  // As voice names: a name that shows nothing where a character stands would look like another.
  if (std::optional<text::InvisibleCharacter> hidden = text::FirstInvisibleCharacter(name)) {
    return bad(
        absl::StrFormat("must not contain invisible or format characters (U+%04X at "
                        "character %d)",
                        static_cast<uint32_t>(hidden->code_point), hidden->index + 1));
  }
  return absl::OkStatus();
}

absl::Status ValidateDictionaryDescription(std::string_view description) {
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

absl::Status DictionaryLimitReached(int max_count) {
  return core::InsufficientStorage("the dictionary store is full (dictionaries.max_count = " +
                                       std::to_string(max_count) + "); delete a dictionary first",
                                   "dictionary_limit_reached");
}

absl::Status DictionaryStorageFull(size_t max_bytes) {
  return core::InsufficientStorage("the dictionary store is full (dictionaries.max_bytes = " +
                                       std::to_string(max_bytes) + "); delete a dictionary first",
                                   "dictionary_storage_full");
}

int64_t DictionaryNowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint64_t RandomDictionaryIdState() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

std::string NewDictionaryId(std::string_view prefix, uint64_t& state) {
  std::mt19937_64 generator(state);
  std::string id(prefix);
  while (id.size() < prefix.size() + kDictionaryIdHexDigits) {
    uint64_t bits = generator();
    for (int i = 0; i < 16 && id.size() < prefix.size() + kDictionaryIdHexDigits; ++i) {
      id.push_back("0123456789abcdef"[(bits >> (4 * i)) & 0xf]);
    }
  }
  state = generator();
  return id;
}

absl::StatusOr<DictionaryRecord> NewDictionaryRecord(std::string_view name,
                                                     std::string_view description, Lexicon lexicon,
                                                     const DictionaryStoreConfig& config,
                                                     uint64_t& id_state) {
  if (absl::Status status = ValidateDictionaryName(name); !status.ok()) return status;
  if (absl::Status status = ValidateDictionaryDescription(description); !status.ok()) {
    return status;
  }
  if (absl::Status status = ValidateStoredLexicon(lexicon, config.limits); !status.ok()) {
    return status;
  }
  DictionaryRecord record;
  record.id = NewDictionaryId(kDictionaryIdPrefix, id_state);
  record.name = std::string(name);
  record.description = std::string(description);
  record.created_at = DictionaryNowSeconds();
  record.versions.push_back({NewDictionaryId(kDictionaryVersionIdPrefix, id_state),
                             record.created_at,
                             std::make_shared<const Lexicon>(std::move(lexicon))});
  return record;
}

absl::Status AddDictionaryVersion(DictionaryRecord& record, const DictionaryEdit& edit,
                                  const DictionaryStoreConfig& config, uint64_t& id_state) {
  absl::StatusOr<Lexicon> edited = edit(*record.versions.back().lexicon);
  if (!edited.ok()) return edited.status();
  if (absl::Status status = ValidateStoredLexicon(*edited, config.limits); !status.ok()) {
    return status;
  }
  std::vector<DictionaryVersion>& versions = record.versions;
  std::string version_id;
  do {
    version_id = NewDictionaryId(kDictionaryVersionIdPrefix, id_state);
  } while (std::any_of(versions.begin(), versions.end(),
                       [&](const DictionaryVersion& v) { return v.version_id == version_id; }));
  versions.push_back({std::move(version_id), DictionaryNowSeconds(),
                      std::make_shared<const Lexicon>(*std::move(edited))});
  const size_t kept = static_cast<size_t>(config.max_versions);
  if (versions.size() > kept) versions.erase(versions.begin(), versions.end() - kept);
  return absl::OkStatus();
}

absl::Status PatchDictionaryRecord(DictionaryRecord& record, std::optional<std::string> name,
                                   std::optional<bool> archived) {
  if (name) {
    if (absl::Status status = ValidateDictionaryName(*name); !status.ok()) return status;
    record.name = *std::move(name);
  }
  if (archived.has_value()) {
    // Archiving an archived dictionary keeps the time it was first archived.
    if (!*archived) {
      record.archived_at.reset();
    } else if (!record.archived_at) {
      record.archived_at = DictionaryNowSeconds();
    }
  }
  return absl::OkStatus();
}

DictionaryInfo DictionaryInfoOf(const StoredDictionary& dictionary) {
  const DictionaryRecord& record = dictionary.record;
  return {record.id,         record.name,        record.description,
          record.created_at, record.archived_at, record.versions.back(),
          dictionary.bytes};
}

std::shared_ptr<const StoredDictionary> DictionaryIndex::Find(std::string_view id) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : it->second;
}

std::optional<DictionaryInfo> DictionaryIndex::Get(std::string_view id) const {
  std::shared_ptr<const StoredDictionary> entry = Find(id);
  if (!entry) return std::nullopt;
  return DictionaryInfoOf(*entry);
}

std::vector<DictionaryInfo> DictionaryIndex::List(bool include_archived) const {
  std::vector<std::shared_ptr<const StoredDictionary>> entries;
  {
    std::lock_guard lock(mutex_);
    entries.reserve(entries_.size());
    for (const auto& [id, entry] : entries_) entries.push_back(entry);
  }
  std::vector<DictionaryInfo> infos;
  infos.reserve(entries.size());
  for (const auto& entry : entries) {
    if (include_archived || !entry->record.archived_at) infos.push_back(DictionaryInfoOf(*entry));
  }
  // Newest first; the id orders those of one second, so the order is the same on every call.
  std::sort(infos.begin(), infos.end(), [](const DictionaryInfo& a, const DictionaryInfo& b) {
    return std::tie(a.created_at, a.id) > std::tie(b.created_at, b.id);
  });
  return infos;
}

absl::StatusOr<DictionaryVersion> DictionaryIndex::Version(std::string_view id,
                                                           std::string_view version_id,
                                                           int max_versions) const {
  std::shared_ptr<const StoredDictionary> entry = Find(id);
  if (!entry) return DictionaryNotFound(id);
  const std::vector<DictionaryVersion>& versions = entry->record.versions;
  if (version_id.empty()) return versions.back();
  auto it = std::find_if(versions.begin(), versions.end(),
                         [&](const DictionaryVersion& v) { return v.version_id == version_id; });
  if (it == versions.end()) {
    return core::NotFound("pronunciation dictionary " + std::string(id) + " has no version " +
                              core::Quoted(version_id) + " (only the newest " +
                              std::to_string(max_versions) + " are kept)",
                          "version_id", "dictionary_version_not_found");
  }
  return *it;
}

size_t DictionaryIndex::TotalBytes() const {
  std::lock_guard lock(mutex_);
  return total_bytes_;
}

size_t DictionaryIndex::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::map<std::string, int64_t> DictionaryIndex::Revisions() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, int64_t> revisions;
  for (const auto& [id, entry] : entries_) revisions.emplace(id, entry->revision);
  return revisions;
}

void DictionaryIndex::Put(std::shared_ptr<const StoredDictionary> dictionary) {
  std::lock_guard lock(mutex_);
  auto [it, added] = entries_.try_emplace(dictionary->record.id);
  if (!added) total_bytes_ -= it->second->bytes;
  total_bytes_ += dictionary->bytes;
  it->second = std::move(dictionary);
}

bool DictionaryIndex::Erase(std::string_view id) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  total_bytes_ -= it->second->bytes;
  entries_.erase(it);
  return true;
}

}  // namespace voxserve::store
