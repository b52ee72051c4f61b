#include "store/open_backends.h"

#include "store/dictionary_store.h"
#include "store/postgres_dictionary_store.h"
#include "store/postgres_voice_store.h"
#include "store/voice_store.h"

namespace voxserve::store {
namespace {

// StatusOr<unique_ptr<Derived>> as StatusOr<unique_ptr<Base>>.
template <typename Base, typename Derived>
absl::StatusOr<std::unique_ptr<Base>> Upcast(absl::StatusOr<std::unique_ptr<Derived>> created) {
  if (!created.ok()) return created.status();
  return std::unique_ptr<Base>(*std::move(created));
}

}  // namespace

absl::StatusOr<std::unique_ptr<VoiceBackend>> OpenVoiceBackend(const VoiceStoreConfig& config,
                                                               VoiceStoreMetrics* metrics) {
  if (config.backend == "postgres") {
    return Upcast<VoiceBackend>(PostgresVoiceStore::Create(config, metrics));
  }
  if (config.dir.empty()) return std::unique_ptr<VoiceBackend>();
  return Upcast<VoiceBackend>(VoiceStore::Create(config));
}

absl::StatusOr<std::unique_ptr<DictionaryBackend>> OpenDictionaryBackend(
    const DictionaryStoreConfig& config, const VoiceStoreConfig& voices) {
  if (config.backend == "postgres") {
    return Upcast<DictionaryBackend>(PostgresDictionaryStore::Create(config, voices));
  }
  if (!config.enabled()) return std::unique_ptr<DictionaryBackend>();
  return Upcast<DictionaryBackend>(DictionaryStore::Create(config));
}

}  // namespace voxserve::store
