// The parent ↔ worker-process wire format (scheduling.isolation: process). One socketpair per
// worker carries length-prefixed frames: a fixed 16-byte header (magic, version, type, payload
// length, reserved) and a payload. Both ends are the same binary on the same host, so integers
// and PCM floats travel in native byte order and samples are never re-encoded.
//
// Parsing is strict: a wrong magic or version, an unknown type, a payload over kMaxFrameBytes, a
// truncated payload or trailing bytes are errors (DataLoss) that name what was wrong; the parent
// then treats the worker as broken and replaces it. Nothing here throws or aborts.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/pcm.h"
#include "engine/streaming_engine.h"

namespace voxserve::scheduler::worker_protocol {

inline constexpr uint32_t kMagic = 0x4B575856;  // "VXWK" in little-endian memory order
// 2: PCM results and step chunks carry their word timings (audio::PcmAudio::words).
inline constexpr uint16_t kVersion = 2;
inline constexpr size_t kHeaderBytes = 16;
// The largest frame either side accepts: a batch's PCM. 400 characters (the default longest
// segment) speak for under a minute, 5.8 MB of float samples at 24 kHz; 256 MiB leaves room for
// large batches of long segments yet stops a corrupt length from allocating gigabytes.
inline constexpr uint32_t kMaxFrameBytes = 256u << 20;
inline constexpr uint32_t kMaxBatch = 4096;

enum class FrameType : uint16_t {
  kReady = 1,       // worker → parent: engine loaded and warmed up; payload: u32 pid
  kFailed = 2,      // worker → parent: could not start; payload: message
  kSynthesize = 3,  // parent → worker: a batch of segments
  kResults = 4,     // worker → parent: one result per segment, in order
  kPing = 5,        // parent → worker: heartbeat while idle
  kPong = 6,        // worker → parent: answer to kPing
  // Streaming engines (engine/streaming_engine.h): the step loop's calls on the worker's runner.
  // The parent decides admission; the worker's runner executes. Begin and Release have no
  // answer (the stream is ordered, so the next Step sees them); a Begin the runner refuses ends
  // that sequence in the next kStepped.
  kBegin = 7,     // parent → worker: u64 sequence id + one segment
  kStep = 8,      // parent → worker: advance every active sequence; payload empty
  kStepped = 9,   // worker → parent: the step's chunks and ends
  kRelease = 10,  // parent → worker: u64 sequence id to forget
};

struct FrameHeader {
  FrameType type = FrameType::kPing;
  uint32_t payload_bytes = 0;
};

struct Frame {
  FrameType type = FrameType::kPing;
  std::string payload;
};

// A segment as it travels to the worker (owning copy of engine::SegmentInput).
struct WireSegment {
  std::string text;
  std::string voice_id;
  double speed = 1.0;
};

std::string EncodeHeader(FrameType type, uint32_t payload_bytes);
absl::StatusOr<FrameHeader> DecodeHeader(std::string_view bytes);  // exactly kHeaderBytes

std::string EncodeSegments(const std::vector<WireSegment>& segments);
absl::StatusOr<std::vector<WireSegment>> DecodeSegments(std::string_view payload);

std::string EncodeResults(const std::vector<absl::StatusOr<audio::PcmAudio>>& results);
absl::StatusOr<std::vector<absl::StatusOr<audio::PcmAudio>>> DecodeResults(
    std::string_view payload);

std::string EncodeBegin(uint64_t id, const WireSegment& segment);
absl::StatusOr<std::pair<uint64_t, WireSegment>> DecodeBegin(std::string_view payload);
std::string EncodeSequenceId(uint64_t id);
absl::StatusOr<uint64_t> DecodeSequenceId(std::string_view payload);
std::string EncodeSteps(const std::vector<engine::SequenceStep>& steps);
absl::StatusOr<std::vector<engine::SequenceStep>> DecodeSteps(std::string_view payload);

std::string EncodeU32(uint32_t value);
absl::StatusOr<uint32_t> DecodeU32(std::string_view payload);

// Whole frames over a blocking stream socket. WriteFrame sends header and payload with one
// sendmsg loop (MSG_NOSIGNAL: a dead peer is EPIPE, not a signal). ReadFrame waits at most until
// `deadline` (time_point::max() = no limit): DeadlineExceeded on timeout, Unavailable when the
// peer closed the connection, DataLoss for a malformed frame.
absl::Status WriteFrame(int fd, FrameType type, std::string_view payload);
absl::StatusOr<Frame> ReadFrame(
    int fd, std::chrono::steady_clock::time_point deadline =
                std::chrono::steady_clock::time_point::max());

}  // namespace voxserve::scheduler::worker_protocol
