#include "store/voice_index.h"

#include <algorithm>
#include <random>
#include <utility>

#include "core/error.h"

namespace voxserve::store {
namespace {

// Stable: voices of one second keep their id order.
void SortOldestFirst(std::vector<StoredVoice>& voices) {
  std::stable_sort(voices.begin(), voices.end(), [](const StoredVoice& a, const StoredVoice& b) {
    return a.metadata.created_at < b.metadata.created_at;
  });
}

}  // namespace

VoiceIndex::VoiceIndex() {
  std::random_device device;
  id_state_ = (static_cast<uint64_t>(device()) << 32) ^ device();
}

absl::StatusOr<VoiceIndex::Hold> VoiceIndex::Reserve(std::string_view model, std::string_view name,
                                                     int max_count, std::string id) {
  std::string key = VoiceNameKey(model, name);
  if (by_name_.contains(key) || held_names_.contains(key)) {
    return core::AlreadyExists(
        "model '" + std::string(model) + "' already has a voice named " + core::Quoted(name),
        "name", "voice_name_taken");
  }
  if (!id.empty() && (voices_.contains(id) || held_ids_.contains(id))) {
    return core::AlreadyExists("voice " + id + " is already stored", "voice_id",
                               "voice_name_taken");
  }
  if (voices_.size() + held_names_.size() >= static_cast<size_t>(max_count)) {
    return core::InsufficientStorage("the voice store is full (voices.max_count = " +
                                         std::to_string(max_count) + "); delete a voice first",
                                     "voice_limit_reached");
  }
  while (id.empty() || voices_.contains(id) || held_ids_.contains(id)) id = NewVoiceId(id_state_);
  held_names_.insert(key);
  held_ids_.insert(id);
  return Hold{std::move(id), std::move(key)};
}

void VoiceIndex::Release(const Hold& hold) {
  held_names_.erase(hold.key);
  held_ids_.erase(hold.id);
}

bool VoiceIndex::Add(StoredVoice voice) {
  Remove(voice.metadata.id);
  const bool named =
      by_name_
          .try_emplace(VoiceNameKey(voice.metadata.model, voice.metadata.name), voice.metadata.id)
          .second;
  total_bytes_ += voice.file_bytes;
  std::string id = voice.metadata.id;
  voices_.emplace(std::move(id), std::move(voice));
  return named;
}

void VoiceIndex::Remove(std::string_view id) {
  auto it = voices_.find(id);
  if (it == voices_.end()) return;
  auto name = by_name_.find(VoiceNameKey(it->second.metadata.model, it->second.metadata.name));
  if (name != by_name_.end() && name->second == id) by_name_.erase(name);
  total_bytes_ -= it->second.file_bytes;
  voices_.erase(it);
}

void VoiceIndex::Clear() {
  voices_.clear();
  by_name_.clear();
  total_bytes_ = 0;
}

std::vector<StoredVoice> VoiceIndex::Select(std::string_view model) const {
  std::vector<StoredVoice> voices;
  for (const auto& [id, voice] : voices_) {
    if (model.empty() || voice.metadata.model == model) voices.push_back(voice);
  }
  return voices;
}

std::vector<StoredVoice> VoiceIndex::List(std::string_view model) const {
  std::vector<StoredVoice> voices = Select(model);
  SortOldestFirst(voices);
  return voices;
}

std::optional<StoredVoice> VoiceIndex::Get(std::string_view id) const {
  auto it = voices_.find(id);
  if (it == voices_.end()) return std::nullopt;
  return it->second;
}

std::optional<StoredVoice> VoiceIndex::FindByName(std::string_view model,
                                                  std::string_view name) const {
  auto it = by_name_.find(VoiceNameKey(model, name));
  if (it == by_name_.end()) return std::nullopt;
  return Get(it->second);
}

std::vector<StoredVoice> IndexedVoiceBackend::List(std::string_view model) const {
  std::vector<StoredVoice> voices;
  {
    std::lock_guard lock(mutex_);
    voices = index_.Select(model);
  }
  // Outside the lock: I/O threads list while registrations and resyncs wait for it.
  SortOldestFirst(voices);
  return voices;
}

std::optional<StoredVoice> IndexedVoiceBackend::Get(std::string_view id) const {
  std::lock_guard lock(mutex_);
  return index_.Get(id);
}

std::optional<StoredVoice> IndexedVoiceBackend::FindByName(std::string_view model,
                                                           std::string_view name) const {
  std::lock_guard lock(mutex_);
  return index_.FindByName(model, name);
}

size_t IndexedVoiceBackend::TotalBytes() const {
  std::lock_guard lock(mutex_);
  return index_.total_bytes();
}

}  // namespace voxserve::store
