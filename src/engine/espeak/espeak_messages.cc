#include "engine/espeak/espeak_messages.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace voxserve::engine::espeak_messages {
namespace {

// sendmsg/recvmsg's header over one buffer, with room for one descriptor (SCM_RIGHTS).
struct OneDescriptorHeader {
  OneDescriptorHeader(void* bytes, size_t size) : data{bytes, size} {
    header.msg_iov = &data;
    header.msg_iovlen = 1;
    header.msg_control = control;
    header.msg_controllen = sizeof control;
  }
  OneDescriptorHeader(const OneDescriptorHeader&) = delete;  // it points into itself
  OneDescriptorHeader& operator=(const OneDescriptorHeader&) = delete;

  iovec data;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr header{};
};

// A message's payload once its four length bytes are in.
bool ReadPayload(int fd, const char* length, uint32_t max_bytes, std::string* payload) {
  const uint32_t size = FromU32Bytes(length);
  if (size > max_bytes) return false;
  payload->resize(size);
  return ReadAll(fd, payload->data(), size);
}

}  // namespace

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // 0: the other end is gone
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Little-endian, as every u32 on the socket.
std::array<char, 4> U32Bytes(uint32_t value) {
  std::array<char, 4> bytes;
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return bytes;
}

uint32_t FromU32Bytes(const char* bytes) {
  const auto* b = reinterpret_cast<const unsigned char*>(bytes);
  return b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
}

void PutU32(std::string& out, uint32_t value) {
  const std::array<char, 4> bytes = U32Bytes(value);
  out.append(bytes.data(), bytes.size());
}

// One message made of `parts` in order (a reply's samples are sent from where they lie).
bool WriteMessage(int fd, std::span<const std::string_view> parts) {
  size_t size = 0;
  for (std::string_view part : parts) size += part.size();
  std::string length;
  PutU32(length, static_cast<uint32_t>(size));
  if (!WriteAll(fd, length.data(), length.size())) return false;
  for (std::string_view part : parts) {
    if (!WriteAll(fd, part.data(), part.size())) return false;
  }
  return true;
}

bool WriteMessage(int fd, std::string_view payload) {
  return WriteMessage(fd, std::span<const std::string_view>(&payload, 1));
}

bool ReadMessage(int fd, uint32_t max_bytes, std::string* payload) {
  char length[4];
  return ReadAll(fd, length, 4) && ReadPayload(fd, length, max_bytes, payload);
}

bool WriteMessageWithFd(int fd, std::string_view payload, int attached) {
  std::string message;
  PutU32(message, static_cast<uint32_t>(payload.size()));
  message += payload;
  OneDescriptorHeader out(message.data(), message.size());
  cmsghdr* rights = CMSG_FIRSTHDR(&out.header);
  rights->cmsg_level = SOL_SOCKET;
  rights->cmsg_type = SCM_RIGHTS;
  rights->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(rights), &attached, sizeof(int));
  ssize_t sent = 0;
  do {
    sent = ::sendmsg(fd, &out.header, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent <= 0) return false;
  return WriteAll(fd, message.data() + sent, message.size() - static_cast<size_t>(sent));
}

bool ReadMessageWithFd(int fd, uint32_t max_bytes, std::string* payload, int* attached) {
  *attached = -1;
  char length[4];
  OneDescriptorHeader in(length, sizeof length);
  ssize_t got = 0;
  do {
    got = ::recvmsg(fd, &in.header, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got <= 0) return false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&in.header); c != nullptr; c = CMSG_NXTHDR(&in.header, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int))) {
      std::memcpy(attached, CMSG_DATA(c), sizeof(int));
    }
  }
  const bool whole = ReadAll(fd, length + got, sizeof length - static_cast<size_t>(got)) &&
                     ReadPayload(fd, length, max_bytes, payload);
  if (!whole && *attached >= 0) {
    ::close(*attached);
    *attached = -1;
  }
  return whole;
}

}  // namespace voxserve::engine::espeak_messages
