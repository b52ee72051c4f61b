// The response cache (docs/response-cache.md): finished audio of deterministic requests, kept in
// memory and replayed to the next identical request, on every transport. Bounded by bytes and by
// entries; segmented LRU, so that a flood of one-off texts cannot push out the phrases that are
// asked for again and again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "core/metrics.h"
#include "service/synthesis_request.h"

namespace voxserve::service {

// YAML cache.* (config_schema.cc).
struct ResponseCacheConfig {
  bool enabled = false;
  // 256 MiB holds ~45 minutes of 48 kHz 16-bit WAV, or ~20 hours of 32 kbit/s MP3.
  size_t max_bytes = 256ull << 20;
  size_t max_entries = 10'000;
  // One long answer (a chapter) must not wipe out hundreds of short ones: larger ones pass by.
  // At most max_bytes in effect.
  size_t max_entry_bytes = 16ull << 20;

  absl::Status Validate() const;
};

// A response as its sink heard it, in order: encoded bytes (OnAudio) and segments' word timings
// (OnTimings). Immutable once stored; shared by the cache and the replays under way.
struct CachedResponse {
  using Event = std::variant<std::string, SegmentTimings>;
  std::vector<Event> events;
  int output_sample_rate = 0;
  // model, voice, input_chars, segments, output_sample_rate, audio_seconds; timings are the
  // replay's own.
  SynthesisSummary summary;
  size_t audio_bytes = 0;

  // What the entry costs the cache: audio, timings and the key, with a fixed overhead per entry.
  size_t CostBytes(size_t key_bytes) const;
};

// Safe cross thread. Every call takes one mutex for a few map and list operations (no I/O, no
// copying of audio: entries are shared), so it is safe on I/O threads. Owned by TtsService.
class ResponseCache {
 public:
  ResponseCache(ResponseCacheConfig config, core::MetricsRegistry& registry);

  bool enabled() const { return config_.enabled; }
  const ResponseCacheConfig& config() const { return config_; }

  // The stored response for `key`, or null. Counts a hit or a miss for `model`.
  std::shared_ptr<const CachedResponse> Lookup(const std::string& key, const std::string& model);

  // An opaque mark of the invalidations so far, taken when a request starts: Insert drops a
  // response whose tags were invalidated after it (a voice deleted while it was synthesized).
  uint64_t Generation() const;

  // Stores `response` (replacing an entry of the same key), evicting the least recently used
  // until the bounds hold. `tags` name what the response depends on beyond its key (a cloned
  // voice: "voice:<id>"), for Invalidate. Responses over max_entry_bytes are not stored.
  void Insert(std::string key, std::vector<std::string> tags,
              std::shared_ptr<const CachedResponse> response, uint64_t generation);

  // Drops every entry tagged `tag`. Returns how many.
  size_t Invalidate(std::string_view tag);

  size_t Bytes() const;
  size_t Entries() const;

 private:
  struct Entry {
    std::string key;
    std::vector<std::string> tags;
    std::shared_ptr<const CachedResponse> response;
    size_t bytes = 0;
    bool protected_segment = false;
  };
  using List = std::list<Entry>;

  // Requires mutex_.
  void Erase(List::iterator entry);
  void EvictUntilWithinBounds();
  void DemoteWhileProtectedIsFull();
  void PublishSizes();

  const ResponseCacheConfig config_;
  // The protected segment (entries hit at least once since stored) may fill this share of
  // both bounds; new entries start in the probation segment and are evicted from there first.
  // 80 % is the split of the SLRU papers (Karedla et al. 1994) and of Caffeine's W-TinyLFU.
  static constexpr size_t kProtectedPercent = 80;

  core::Family<core::Counter>& hits_;
  core::Family<core::Counter>& misses_;
  core::Counter& evictions_;
  core::Counter& invalidations_;
  core::Counter& too_large_;
  core::Gauge& bytes_gauge_;
  core::Gauge& entries_gauge_;

  mutable std::mutex mutex_;
  List probation_;  // most recently used first; guarded by mutex_
  List protected_;  // most recently used first; guarded by mutex_
  // Views into the entries' own keys: list nodes never move.
  std::unordered_map<std::string_view, List::iterator> index_;  // guarded by mutex_
  size_t bytes_ = 0;                                            // guarded by mutex_
  size_t protected_bytes_ = 0;                                  // guarded by mutex_
  uint64_t generation_ = 0;                                     // guarded by mutex_
};

// Reads a Cache-Control (or Pragma) header value: directives separated by commas, names
// case-insensitive, unknown ones ignored. Empty: kUse.
CachePolicy ParseCacheControl(std::string_view header);

// "hit", "miss", "bypass": the value of the transports' X-Cache header; empty for kOff (no header).
std::string_view CacheResultName(CacheResult result);

}  // namespace voxserve::service
