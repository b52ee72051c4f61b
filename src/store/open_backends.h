// The one place that knows every backend of the store (as engine::CreateEngine knows every
// engine): the service opens what the configuration names through these and sees only the
// interfaces (voice_backend.h, dictionary_backend.h).
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "store/dictionary_backend.h"
#include "store/voice_backend.h"
#include "store/voice_store_metrics.h"

namespace voxserve::store {

// voices.backend: `dir` (null when voices.dir is empty: cloning is off) or `postgres`. `metrics`
// may be null; else it outlives the backend.
absl::StatusOr<std::unique_ptr<VoiceBackend>> OpenVoiceBackend(const VoiceStoreConfig& config,
                                                               VoiceStoreMetrics* metrics);

// dictionaries.backend: `dir` (null when dictionaries.dir is empty: the API is off) or
// `postgres`, in the database of the voices' registry (`voices`, voices.postgres.*).
absl::StatusOr<std::unique_ptr<DictionaryBackend>> OpenDictionaryBackend(
    const DictionaryStoreConfig& config, const VoiceStoreConfig& voices);

}  // namespace voxserve::store
