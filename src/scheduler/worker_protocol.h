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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "audio/pcm.h"
#include "engine/streaming_engine.h"
#include "engine/voice_cloning.h"

namespace voxserve::scheduler::worker_protocol {

inline constexpr uint32_t kMagic = 0x4B575856;  // "VXWK" in little-endian memory order
// 2: PCM results and step chunks carry their word timings (audio::PcmAudio::words).
// 3: segments carry instructions, seed, voice mode and a cloned voice's profile (CosyVoice).
// 5: a step's answer ends with the runner's figures (engine::StreamRunnerStats).
inline constexpr uint16_t kVersion = 5;
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

// A segment as it travels to the worker (owning copy of engine::SegmentInput). Every field of
// the input goes, the cloned voice's profile too: it is sent with each segment (a 10 s prompt's
// is about 160 kB, small beside what synthesizing with it costs) rather than cached per worker,
// so a worker holds no voice state and a restarted one needs nothing replayed.
struct WireSegment {
  std::string text;
  std::string voice_id;
  double speed = 1.0;
  std::string instructions;
  std::optional<uint64_t> seed;
  std::optional<engine::VoiceMode> voice_mode;
  std::shared_ptr<const engine::VoiceProfile> voice_profile;
  std::string phonemes;
  double pitch = 1.0;

  static WireSegment From(const engine::SegmentInput& input);
  // A view of this segment; valid while it lives.
  engine::SegmentInput Input() const;
};

// A payload as the pieces of one gather write, so that PCM goes from the engine's buffers straight
// into the socket (one kernel copy instead of a copy into a string first: perf showed that
// copy, its allocation and its page faults as most of a worker's cost beside the engine).
// Encoded fields are held here; borrowed pieces point into the caller's samples, which must
// outlive every use of the pieces. Not thread-safe; one per frame.
class PayloadPieces {
 public:
  void Append(const void* data, size_t size);  // copied
  void Borrow(const void* data, size_t size);  // referenced
  size_t size() const { return size_; }
  // The pieces in order; valid until this object changes or is destroyed.
  std::vector<std::string_view> Views() const;
  // The payload as one string (what Encode* return).
  std::string Flatten() &&;

 private:
  struct Piece {
    const char* borrowed;  // null: `size` bytes of fields_ from `offset`
    size_t offset;
    size_t size;
  };
  std::string fields_;
  std::vector<Piece> pieces_;
  size_t size_ = 0;
};

// A frame's payload as it is read, kept by the reader from frame to frame so that a steady
// stream of results costs no allocation (and no zero-filling or page faults) per frame. A
// buffer grown past kKeptBufferBytes by an unusually large frame is shrunk at the next one.
// Not thread-safe; one per connection.
class FrameBuffer {
 public:
  // Room for `size` bytes; the contents are unspecified until written.
  char* Resize(size_t size);
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  static constexpr size_t kKeptBufferBytes = 8u << 20;
  std::unique_ptr<char[]> data_;
  size_t capacity_ = 0;
  size_t size_ = 0;
};

std::string EncodeHeader(FrameType type, uint32_t payload_bytes);
absl::StatusOr<FrameHeader> DecodeHeader(std::string_view bytes);  // exactly kHeaderBytes

std::string EncodeSegments(const std::vector<WireSegment>& segments);
absl::StatusOr<std::vector<WireSegment>> DecodeSegments(std::string_view payload);

// The results as one gather payload; it borrows the results' samples.
PayloadPieces ResultsPayload(const std::vector<absl::StatusOr<audio::PcmAudio>>& results);
std::string EncodeResults(const std::vector<absl::StatusOr<audio::PcmAudio>>& results);
absl::StatusOr<std::vector<absl::StatusOr<audio::PcmAudio>>> DecodeResults(
    std::string_view payload);

std::string EncodeBegin(uint64_t id, const WireSegment& segment);
absl::StatusOr<std::pair<uint64_t, WireSegment>> DecodeBegin(std::string_view payload);
std::string EncodeSequenceId(uint64_t id);
absl::StatusOr<uint64_t> DecodeSequenceId(std::string_view payload);
// A step's answer: its chunks and ends, then the runner's figures after it.
struct Stepped {
  std::vector<engine::SequenceStep> steps;
  engine::StreamRunnerStats stats;
};
PayloadPieces StepsPayload(const std::vector<engine::SequenceStep>& steps,
                           const engine::StreamRunnerStats& stats = {});  // borrows samples
std::string EncodeSteps(const std::vector<engine::SequenceStep>& steps,
                        const engine::StreamRunnerStats& stats = {});
absl::StatusOr<Stepped> DecodeSteps(std::string_view payload);

std::string EncodeU32(uint32_t value);
absl::StatusOr<uint32_t> DecodeU32(std::string_view payload);

// Whole frames over a blocking stream socket. WriteFrame sends header and payload with one
// sendmsg loop (MSG_NOSIGNAL: a dead peer is EPIPE, not a signal). ReadFrame waits at most until
// `deadline` (time_point::max() = no limit): DeadlineExceeded on timeout, Unavailable when the
// peer closed the connection, DataLoss for a malformed frame.
absl::Status WriteFrame(int fd, FrameType type, std::string_view payload);
absl::Status WriteFramePieces(int fd, FrameType type, const PayloadPieces& payload);
absl::StatusOr<Frame> ReadFrame(int fd, std::chrono::steady_clock::time_point deadline =
                                            std::chrono::steady_clock::time_point::max());
// As ReadFrame, with the payload in *payload (payload->view()) instead of a new string.
absl::StatusOr<FrameType> ReadFrameInto(
    int fd, FrameBuffer* payload,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

// Sizes a worker socket's send buffer so that a typical batch's PCM (a sentence is ~0.25 MB of
// float samples) is written in one go instead of in 200 kB rounds, each a wake-up of the
// reader and a context switch. Best effort: the kernel caps it at net.core.wmem_max.
void EnlargeSendBuffer(int fd);

}  // namespace voxserve::scheduler::worker_protocol
