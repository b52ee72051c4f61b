// voxserve's JSON form of word and character timings, shared by the REST routes (whole-file JSON
// and SSE) and the WebSocket protocol (docs/timings.md).
#pragma once

#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "service/synthesis_request.h"

namespace voxserve::transport::http {

// What a client asked for with "timestamps": nothing, one entry per word, or per character.
enum class TimestampsMode { kNone, kWord, kChar };

// Reads a "timestamps" value: absent/null/"none"/false = kNone, "word" (or true), "char".
// InvalidArgument naming `field` otherwise.
absl::StatusOr<TimestampsMode> ParseTimestampsMode(const nlohmann::json* value,
                                                   std::string_view field = "timestamps");

// "exact" | "estimated" | "none".
std::string_view TimingsKindName(audio::TimingsKind kind);

// The entries of one segment, Kokoro-FastAPI's captioned-speech shape:
// [{"word": "Hello", "start_time": 0.0, "end_time": 0.31}, ...], or "char" instead of "word".
// Times in seconds, rounded to the millisecond; mode must not be kNone.
nlohmann::json TimestampEntries(const service::SegmentTimings& segment, TimestampsMode mode);

// Every segment's entries in one array (a whole response).
nlohmann::json TimestampEntries(std::span<const service::SegmentTimings> segments,
                                TimestampsMode mode);

// The least exact kind among the segments' ("exact" only when every segment's is exact).
std::string_view CombinedTimingsKind(std::span<const service::SegmentTimings> segments);

}  // namespace voxserve::transport::http
