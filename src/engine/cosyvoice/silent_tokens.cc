#include "engine/cosyvoice/silent_tokens.h"

#include <algorithm>

namespace voxserve::engine::cosyvoice {

SilentRunFilter::SilentRunFilter(std::span<const int64_t> silent_ids)
    : silent_(silent_ids.begin(), silent_ids.end()) {
  std::sort(silent_.begin(), silent_.end());
}

bool SilentRunFilter::Keep(int64_t token) {
  if (!std::binary_search(silent_.begin(), silent_.end(), token)) {
    run_ = 0;
    return true;
  }
  // The counter grows past the bound and the run's later tokens are skipped (model.py:122-125).
  return ++run_ <= kMaxRun;
}

}  // namespace voxserve::engine::cosyvoice
