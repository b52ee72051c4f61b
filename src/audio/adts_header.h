// The 7-byte ADTS header (ISO/IEC 13818-7 / 14496-3) that makes raw AAC-LC frames a playable
// .aac stream. libavcodec's encoder emits raw frames; only libavformat's muxer would add these.
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace voxserve::audio {

// The samplingFrequencyIndex of `sample_rate`, or InvalidArgument for a rate AAC cannot carry.
absl::StatusOr<int> AacSamplingFrequencyIndex(int sample_rate);

// Appends the header of one mono AAC-LC frame of `payload_bytes` bytes (no CRC). A frame with
// its header must fit the 13-bit frame_length field (8191 bytes).
absl::Status AppendAdtsHeader(int sampling_frequency_index, std::size_t payload_bytes,
                              std::string* out);

}  // namespace voxserve::audio
