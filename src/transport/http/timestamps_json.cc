#include "transport/http/timestamps_json.h"

#include <cmath>

#include "core/error.h"
#include "service/alignment_estimate.h"

namespace voxserve::transport::http {
namespace {

double Milliseconds(double seconds) { return std::round(seconds * 1000.0) / 1000.0; }

}  // namespace

absl::StatusOr<TimestampsMode> ParseTimestampsMode(const nlohmann::json* value,
                                                   std::string_view field) {
  const std::string name(field);
  if (value == nullptr || value->is_null()) return TimestampsMode::kNone;
  if (value->is_boolean())
    return value->get<bool>() ? TimestampsMode::kWord : TimestampsMode::kNone;
  if (value->is_string()) {
    const std::string& mode = value->get_ref<const std::string&>();
    if (mode == "word") return TimestampsMode::kWord;
    if (mode == "char") return TimestampsMode::kChar;
    if (mode == "none") return TimestampsMode::kNone;
  }
  return core::InvalidArgument(name + " must be \"word\", \"char\" or \"none\"", name,
                               "invalid_timestamps");
}

std::string_view TimingsKindName(audio::TimingsKind kind) {
  switch (kind) {
    case audio::TimingsKind::kExact:
      return "exact";
    case audio::TimingsKind::kEstimated:
      return "estimated";
    case audio::TimingsKind::kNone:
      break;
  }
  return "none";
}

nlohmann::json TimestampEntries(const service::SegmentTimings& segment, TimestampsMode mode) {
  const bool words = mode == TimestampsMode::kWord;
  nlohmann::json entries = nlohmann::json::array();
  for (service::TimedText& entry :
       words ? service::WordEntries(segment) : service::CharacterEntries(segment)) {
    entries.push_back({{words ? "word" : "char", std::move(entry.text)},
                       {"start_time", Milliseconds(entry.start_s)},
                       {"end_time", Milliseconds(entry.end_s)}});
  }
  return entries;
}

nlohmann::json TimestampEntries(std::span<const service::SegmentTimings> segments,
                                TimestampsMode mode) {
  nlohmann::json entries = nlohmann::json::array();
  for (const service::SegmentTimings& segment : segments) {
    for (nlohmann::json& entry : TimestampEntries(segment, mode))
      entries.push_back(std::move(entry));
  }
  return entries;
}

std::string_view CombinedTimingsKind(std::span<const service::SegmentTimings> segments) {
  if (segments.empty()) return "none";
  for (const service::SegmentTimings& segment : segments) {
    if (segment.kind != audio::TimingsKind::kExact) return TimingsKindName(segment.kind);
  }
  return "exact";
}

}  // namespace voxserve::transport::http
