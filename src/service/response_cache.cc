#include "service/response_cache.h"

#include <algorithm>
#include <cctype>

#include "core/error.h"

namespace voxserve::service {
namespace {

// A list node, the index slot, the shared_ptr's control block and the response's vectors: a
// round figure above what they take on 64-bit Linux, so that a flood of tiny entries is bounded
// by bytes too.
constexpr size_t kEntryOverheadBytes = 256;

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// No entry is larger than the whole cache.
ResponseCacheConfig Clamped(ResponseCacheConfig config) {
  config.max_entry_bytes = std::min(config.max_entry_bytes, config.max_bytes);
  return config;
}

}  // namespace

absl::Status ResponseCacheConfig::Validate() const {
  if (max_bytes < (1u << 20) || max_bytes > (1ull << 40)) {
    return core::InvalidArgument("cache.max_bytes must be within 1048576..1099511627776");
  }
  if (max_entries < 1 || max_entries > 10'000'000) {
    return core::InvalidArgument("cache.max_entries must be within 1..10000000");
  }
  if (max_entry_bytes < 1024 || max_entry_bytes > (1ull << 40)) {
    return core::InvalidArgument("cache.max_entry_bytes must be within 1024..1099511627776");
  }
  return absl::OkStatus();
}

size_t CachedResponse::CostBytes(size_t key_bytes) const {
  size_t bytes = kEntryOverheadBytes + key_bytes + audio_bytes;
  for (const Event& event : events) {
    if (const auto* timings = std::get_if<SegmentTimings>(&event)) {
      bytes += sizeof(SegmentTimings) + timings->text.size() +
               timings->words.size() * sizeof(audio::WordTiming);
    } else {
      bytes += sizeof(std::string);
    }
  }
  return bytes;
}

ResponseCache::ResponseCache(ResponseCacheConfig config, core::MetricsRegistry& registry)
    : config_(Clamped(config)),
      hits_(registry.AddCounter("voxserve_response_cache_hits_total",
                                "Synthesis requests answered from the response cache.", {"model"})),
      misses_(registry.AddCounter(
          "voxserve_response_cache_misses_total",
          "Cacheable synthesis requests the response cache did not hold (synthesized).",
          {"model"})),
      evictions_(registry
                     .AddCounter("voxserve_response_cache_evictions_total",
                                 "Responses dropped from the cache to stay within its bounds.")
                     .WithLabels({})),
      invalidations_(registry
                         .AddCounter("voxserve_response_cache_invalidations_total",
                                     "Responses dropped because what they depend on changed "
                                     "(a cloned voice deleted).")
                         .WithLabels({})),
      too_large_(registry
                     .AddCounter("voxserve_response_cache_too_large_total",
                                 "Responses not stored: larger than cache.max_entry_bytes.")
                     .WithLabels({})),
      bytes_gauge_(registry
                       .AddGauge("voxserve_response_cache_bytes",
                                 "Bytes the response cache holds (audio, timings, keys).")
                       .WithLabels({})),
      entries_gauge_(
          registry
              .AddGauge("voxserve_response_cache_entries", "Responses the response cache holds.")
              .WithLabels({})) {}

std::shared_ptr<const CachedResponse> ResponseCache::Lookup(const std::string& key,
                                                            const std::string& model) {
  std::shared_ptr<const CachedResponse> found;
  {
    std::lock_guard lock(mutex_);
    if (auto it = index_.find(key); it != index_.end()) {
      List::iterator entry = it->second;
      found = entry->response;
      if (entry->protected_segment) {
        protected_.splice(protected_.begin(), protected_, entry);
      } else {
        // A second use: into the protected segment, whose least recent entries go back on
        // probation when it is full.
        entry->protected_segment = true;
        protected_bytes_ += entry->bytes;
        protected_.splice(protected_.begin(), probation_, entry);
        DemoteWhileProtectedIsFull();
      }
    }
  }
  (found ? hits_ : misses_).WithLabels({model}).Increment();
  return found;
}

uint64_t ResponseCache::Generation() const {
  std::lock_guard lock(mutex_);
  return generation_;
}

void ResponseCache::Insert(std::string key, std::vector<std::string> tags,
                           std::shared_ptr<const CachedResponse> response, uint64_t generation) {
  const size_t bytes = response->CostBytes(key.size());
  if (bytes > config_.max_entry_bytes) {
    too_large_.Increment();
    return;
  }
  std::lock_guard lock(mutex_);
  if (generation != generation_ && !tags.empty()) return;  // may depend on what was invalidated
  if (auto it = index_.find(key); it != index_.end()) Erase(it->second);
  probation_.push_front(Entry{std::move(key), std::move(tags), std::move(response), bytes, false});
  index_.emplace(probation_.front().key, probation_.begin());
  bytes_ += bytes;
  EvictUntilWithinBounds();
  PublishSizes();
}

size_t ResponseCache::Invalidate(std::string_view tag) {
  std::lock_guard lock(mutex_);
  ++generation_;
  size_t dropped = 0;
  for (List* list : {&probation_, &protected_}) {
    for (auto it = list->begin(); it != list->end();) {
      auto next = std::next(it);
      if (std::find(it->tags.begin(), it->tags.end(), tag) != it->tags.end()) {
        Erase(it);
        ++dropped;
      }
      it = next;
    }
  }
  invalidations_.Increment(static_cast<double>(dropped));
  PublishSizes();
  return dropped;
}

size_t ResponseCache::Bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

size_t ResponseCache::Entries() const {
  std::lock_guard lock(mutex_);
  return index_.size();
}

void ResponseCache::Erase(List::iterator entry) {
  index_.erase(entry->key);
  bytes_ -= entry->bytes;
  if (entry->protected_segment) {
    protected_bytes_ -= entry->bytes;
    protected_.erase(entry);
  } else {
    probation_.erase(entry);
  }
}

void ResponseCache::EvictUntilWithinBounds() {
  while (bytes_ > config_.max_bytes || index_.size() > config_.max_entries) {
    List& victims = probation_.empty() ? protected_ : probation_;
    Erase(std::prev(victims.end()));
    evictions_.Increment();
  }
}

void ResponseCache::DemoteWhileProtectedIsFull() {
  const size_t max_bytes = config_.max_bytes / 100 * kProtectedPercent;
  const size_t max_entries = std::max<size_t>(1, config_.max_entries * kProtectedPercent / 100);
  while (protected_.size() > 1 &&
         (protected_bytes_ > max_bytes || protected_.size() > max_entries)) {
    List::iterator oldest = std::prev(protected_.end());
    oldest->protected_segment = false;
    protected_bytes_ -= oldest->bytes;
    probation_.splice(probation_.begin(), protected_, oldest);
  }
}

void ResponseCache::PublishSizes() {
  bytes_gauge_.Set(static_cast<double>(bytes_));
  entries_gauge_.Set(static_cast<double>(index_.size()));
}

CachePolicy ParseCacheControl(std::string_view header) {
  CachePolicy policy = CachePolicy::kUse;
  while (!header.empty()) {
    const size_t comma = header.find(',');
    std::string_view directive = Trimmed(header.substr(0, comma));
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    const size_t equals = directive.find('=');
    const std::string_view name = Trimmed(directive.substr(0, equals));
    const std::string_view value = equals == std::string_view::npos
                                       ? std::string_view()
                                       : Trimmed(directive.substr(equals + 1));
    if (EqualsIgnoringCase(name, "no-store")) return CachePolicy::kBypass;
    // max-age=0 is what browsers send on a reload: the same "fetch afresh" as no-cache.
    if (EqualsIgnoringCase(name, "no-cache") ||
        (EqualsIgnoringCase(name, "max-age") && (value == "0" || value == "\"0\""))) {
      policy = CachePolicy::kRefresh;
    }
  }
  return policy;
}

std::string_view CacheResultName(CacheResult result) {
  switch (result) {
    case CacheResult::kOff:
      return "";
    case CacheResult::kHit:
      return "hit";
    case CacheResult::kMiss:
      return "miss";
    case CacheResult::kBypass:
      return "bypass";
  }
  return "";
}

}  // namespace voxserve::service
