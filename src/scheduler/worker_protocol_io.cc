// The socket half of the worker wire format (worker_protocol.h): whole frames over a blocking
// stream socket, written with gather I/O and read into reusable buffers.
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "scheduler/worker_protocol.h"

namespace voxserve::scheduler::worker_protocol {
namespace {

int MillisecondsUntil(std::chrono::steady_clock::time_point deadline) {
  if (deadline == std::chrono::steady_clock::time_point::max()) return -1;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                  deadline - std::chrono::steady_clock::now())
                  .count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1'000'000'000));
}

// Reads exactly `size` bytes into `out`, waiting at most until the deadline.
// `started`: bytes of this frame were read before, so an end of stream is mid-frame.
// It tries the read first and polls only when nothing is there: the rest of a frame whose
// header has come is usually there already, and each poll is one more system call.
absl::Status ReadExact(int fd, char* out, size_t size,
                       std::chrono::steady_clock::time_point deadline, bool started) {
  size_t done = 0;
  while (done < size) {
    ssize_t got = ::recv(fd, out + done, size - done, MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd ready{fd, POLLIN, 0};
      int waited = ::poll(&ready, 1, MillisecondsUntil(deadline));
      if (waited < 0) {
        if (errno == EINTR) continue;
        return absl::InternalError(std::string("poll on worker socket: ") + std::strerror(errno));
      }
      if (waited == 0) return absl::DeadlineExceededError("worker did not answer in time");
      continue;
    }
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno == ECONNRESET) return absl::UnavailableError("worker connection reset");
      return absl::InternalError(std::string("read from worker socket: ") + std::strerror(errno));
    }
    if (got == 0) {
      return absl::UnavailableError(done == 0 && !started
                                        ? "worker closed the connection"
                                        : "worker closed the connection mid-frame");
    }
    done += static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

// Sends the header and then every piece, in as few sendmsg calls as the kernel allows.
absl::Status WritePieces(int fd, FrameType type, std::span<const std::string_view> pieces,
                         size_t payload_bytes) {
  if (payload_bytes > kMaxFrameBytes) {
    return absl::ResourceExhaustedError("worker frame of " + std::to_string(payload_bytes) +
                                        " bytes is over the limit");
  }
  std::string header = EncodeHeader(type, static_cast<uint32_t>(payload_bytes));
  std::vector<iovec> parts;
  parts.reserve(pieces.size() + 1);
  parts.push_back({header.data(), header.size()});
  for (std::string_view piece : pieces) {
    if (!piece.empty()) parts.push_back({const_cast<char*>(piece.data()), piece.size()});
  }
  size_t first = 0;  // parts before it have gone; parts[first] is advanced past what went
  while (first < parts.size()) {
    msghdr message{};
    message.msg_iov = parts.data() + first;
    message.msg_iovlen = std::min<size_t>(parts.size() - first, IOV_MAX);
    ssize_t wrote = ::sendmsg(fd, &message, MSG_NOSIGNAL);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      if (errno == EPIPE || errno == ECONNRESET) {
        return absl::UnavailableError("worker connection is closed");
      }
      return absl::InternalError(std::string("write to worker socket: ") + std::strerror(errno));
    }
    // Skip what has gone already (a large payload may take several calls).
    auto left = static_cast<size_t>(wrote);
    while (first < parts.size() && left >= parts[first].iov_len) {
      left -= parts[first].iov_len;
      ++first;
    }
    if (left > 0) {
      parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + left;
      parts[first].iov_len -= left;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<FrameHeader> ReadHeader(int fd, std::chrono::steady_clock::time_point deadline) {
  char header_bytes[kHeaderBytes];
  if (absl::Status status = ReadExact(fd, header_bytes, kHeaderBytes, deadline, false);
      !status.ok()) {
    return status;
  }
  return DecodeHeader(std::string_view(header_bytes, kHeaderBytes));
}

}  // namespace

char* FrameBuffer::Resize(size_t size) {
  // Shrink a buffer one large frame left behind, so a worker's reader does not keep it.
  if (size > capacity_ || (capacity_ > kKeptBufferBytes && size <= kKeptBufferBytes)) {
    data_ = std::make_unique_for_overwrite<char[]>(std::max<size_t>(size, 1));
    capacity_ = std::max<size_t>(size, 1);
  }
  size_ = size;
  return data_.get();
}

absl::Status WriteFrame(int fd, FrameType type, std::string_view payload) {
  return WritePieces(fd, type, std::span<const std::string_view>(&payload, 1), payload.size());
}

absl::Status WriteFramePieces(int fd, FrameType type, const PayloadPieces& payload) {
  std::vector<std::string_view> views = payload.Views();
  return WritePieces(fd, type, views, payload.size());
}

absl::StatusOr<Frame> ReadFrame(int fd, std::chrono::steady_clock::time_point deadline) {
  auto header = ReadHeader(fd, deadline);
  if (!header.ok()) return header.status();
  Frame frame;
  frame.type = header->type;
  frame.payload.resize(header->payload_bytes);
  if (absl::Status status =
          ReadExact(fd, frame.payload.data(), frame.payload.size(), deadline, true);
      !status.ok()) {
    return status;
  }
  return frame;
}

absl::StatusOr<FrameType> ReadFrameInto(int fd, FrameBuffer* payload,
                                        std::chrono::steady_clock::time_point deadline) {
  auto header = ReadHeader(fd, deadline);
  if (!header.ok()) return header.status();
  char* out = payload->Resize(header->payload_bytes);
  if (absl::Status status = ReadExact(fd, out, header->payload_bytes, deadline, true);
      !status.ok()) {
    return status;
  }
  return header->type;
}

void EnlargeSendBuffer(int fd) {
  // 1 MiB asked (the kernel doubles it for its bookkeeping): four sentences of float PCM.
  int bytes = 1 << 20;
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
}

}  // namespace voxserve::scheduler::worker_protocol
