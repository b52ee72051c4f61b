// The messages between this process, espeak-ng's template process and its speakers
// (espeak_synth_process.h): on a socket or a pipe, a u32 length (little-endian), then that many
// bytes; a speaker's socket travels with a message as SCM_RIGHTS. Blocking calls, retried on
// EINTR; false when the peer is gone or a length passes `max_bytes`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace voxserve::engine::espeak_messages {

bool WriteAll(int fd, const char* data, size_t size);
bool ReadAll(int fd, char* data, size_t size);
std::array<char, 4> U32Bytes(uint32_t value);
uint32_t FromU32Bytes(const char* bytes);
void PutU32(std::string& out, uint32_t value);

// One message of the parts, concatenated.
bool WriteMessage(int fd, std::span<const std::string_view> parts);
bool WriteMessage(int fd, std::string_view payload);
bool ReadMessage(int fd, uint32_t max_bytes, std::string* payload);

// A message with a descriptor attached to its first byte (SCM_RIGHTS): how the template hands a
// speaker's socket over. The sender keeps its own copy open until it closes it.
bool WriteMessageWithFd(int fd, std::string_view payload, int attached);
// Reads a message and the descriptor that came with it (*attached, close-on-exec; -1 when none).
// On false nothing is left open.
bool ReadMessageWithFd(int fd, uint32_t max_bytes, std::string* payload, int* attached);

// Reads what a message holds, in order; false once something is missing.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  bool U32(uint32_t* out) {
    if (bytes_.size() < 4) return false;
    *out = FromU32Bytes(bytes_.data());
    bytes_.remove_prefix(4);
    return true;
  }
  bool Bytes(size_t size, std::string_view* out) {
    if (bytes_.size() < size) return false;
    *out = bytes_.substr(0, size);
    bytes_.remove_prefix(size);
    return true;
  }
  bool String(std::string_view* out) {
    uint32_t size = 0;
    return U32(&size) && Bytes(size, out);
  }
  bool done() const { return bytes_.empty(); }

 private:
  std::string_view bytes_;
};

}  // namespace voxserve::engine::espeak_messages
