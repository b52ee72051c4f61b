// Between the proto messages of voxserve.v1 and the service's transport-neutral types: request
// options in, usage and timings out.
#pragma once

#include <chrono>

#include "absl/status/statusor.h"
#include "audio/audio_format.h"
#include "service/synthesis_request.h"
#include "voxserve/v1/tts.pb.h"

namespace voxserve::transport::grpc {

// `options` → a SynthesisRequest without its text. `default_format` stands in for
// AUDIO_FORMAT_UNSPECIFIED. The call's gRPC deadline (time_point::max() when it has none) caps
// the request's timeout: the earlier of the two wins, up to `max_timeout_ms` (the service's
// limit); a deadline already passed is DEADLINE_EXCEEDED.
absl::StatusOr<service::SynthesisRequest> ToSynthesisRequest(
    const v1::SynthesisOptions& options, audio::AudioFormat default_format,
    std::chrono::system_clock::time_point call_deadline, int max_timeout_ms);

v1::AudioFormat ToProtoFormat(audio::AudioFormat format);
void FillUsage(const service::SynthesisSummary& summary, v1::Usage* usage);
void FillTimings(const service::SynthesisSummary& summary, v1::Timings* timings);
// One segment's word timings as `mode` asks (docs/timings.md); mode must not be NONE.
void FillTimestamps(const service::SegmentTimings& segment, v1::TimestampsMode mode,
                    v1::SegmentTimestamps* out);

}  // namespace voxserve::transport::grpc
