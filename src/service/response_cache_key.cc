#include "service/response_cache_key.h"

#include <bit>

namespace voxserve::service {
namespace {

void Append(std::string& out, std::string_view field) {
  out += std::to_string(field.size());
  out += ':';
  out += field;
}

}  // namespace

std::string ResponseCacheKey::Serialize() const {
  std::string out;
  size_t text_bytes = 0;
  for (const std::string& segment : segments) text_bytes += segment.size() + 8;
  out.reserve(text_bytes + model_id.size() + model_fingerprint.size() + voice_id.size() +
              instructions.size() + markup_version.size() + 96);
  out += "v1|";  // the layout's version
  Append(out, model_id);
  Append(out, model_fingerprint);
  Append(out, voice_id);
  Append(out, voice_version);
  Append(out, voice_mode);
  Append(out, instructions);
  Append(out, markup_version);
  // The speed's exact bits: 1.0 and 1.0000001 are different requests.
  Append(out, std::to_string(std::bit_cast<uint64_t>(speed)));
  Append(out, audio::FormatName(format));
  Append(out, std::to_string(sample_rate));
  Append(out, streaming ? "stream" : "file");
  Append(out, seed ? std::to_string(*seed) : std::string());
  Append(out, std::to_string(segments.size()));
  for (const std::string& segment : segments) Append(out, segment);
  return out;
}

bool EngineOutputIsDeterministic(std::string_view engine, const std::optional<uint64_t>& seed) {
  if (engine == "cosyvoice") return seed.has_value();
  return true;
}

}  // namespace voxserve::service
