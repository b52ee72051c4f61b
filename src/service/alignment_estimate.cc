#include "service/alignment_estimate.h"

#include <algorithm>

namespace voxserve::service {
namespace {

// The length of the UTF-8 sequence that starts with `lead` (1 for a stray continuation byte).
size_t SequenceLength(unsigned char lead) {
  if (lead >= 0xF0 && lead < 0xF8) return 4;
  if (lead >= 0xE0) return lead < 0xF0 ? 3 : 1;
  if (lead >= 0xC0) return 2;
  return 1;
}

}  // namespace

CharacterAlignment EstimateAlignment(std::string_view text, double start_seconds,
                                     double duration_seconds) {
  CharacterAlignment alignment;
  for (size_t at = 0; at < text.size();) {
    size_t length =
        std::min(SequenceLength(static_cast<unsigned char>(text[at])), text.size() - at);
    alignment.characters.emplace_back(text.substr(at, length));
    at += length;
  }
  const double n = static_cast<double>(alignment.characters.size());
  for (size_t i = 0; i < alignment.characters.size(); ++i) {
    alignment.start_seconds.push_back(start_seconds + duration_seconds * (i / n));
    alignment.end_seconds.push_back(start_seconds + duration_seconds * ((i + 1) / n));
  }
  return alignment;
}

}  // namespace voxserve::service
